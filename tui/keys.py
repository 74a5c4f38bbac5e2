"""What a dialog's key hints say: the keys its bindings have now, the person's keymap applied.

A consent dialog says which key approves and which cancels. Written out as
fixed text, a keymap that moves the bindings (``~/.config/arrowgate/keymap.json``)
would leave the hint naming a key that now does something else: "esc cancel"
while esc approves. So hints are read from the bindings, by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.dom import DOMNode

__all__ = ["bindings_of", "key_hint"]


def bindings_of(owner: type[DOMNode]) -> list[Binding]:
    """Every `Binding` a class declares, its bases' first (as Textual merges them)."""
    out: list[Binding] = []
    for klass in reversed(owner.__mro__):
        out.extend(b for b in vars(klass).get("BINDINGS", ()) if isinstance(b, Binding))
    return out


def key_hint(node: DOMNode, binding_id: str) -> str:
    """The keys of ``node``'s binding ``binding_id`` as a hint reads them: ``shift+y``,
    ``n / esc`` (several keys joined), after the app's keymap (``keys_for``, when it has one).

    Raises:
        KeyError: ``node`` has no binding with that id (a hint for nothing is a bug).
    """
    for binding in reversed(bindings_of(type(node))):  # a subclass's own first
        if binding.id == binding_id:
            keys_for = getattr(node.app, "keys_for", None)
            keys = keys_for(binding) if keys_for is not None else binding.key
            return " / ".join(_shown(node, key.strip()) for key in keys.split(",")
                              if key.strip())
    raise KeyError(binding_id)


def _shown(node: DOMNode, key: str) -> str:
    # Textual shows the key "Y" as "Y"; a person reads it as shift+y.
    if len(key) == 1 and key.isalpha() and key.isupper():
        return f"shift+{key.lower()}"
    return node.app.get_key_display(Binding(key, ""))
