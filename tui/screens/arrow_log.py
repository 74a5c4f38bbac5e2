"""The arrow log: every decision, newest last, filtered, verified, live."""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import Any, ClassVar, TextIO

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static

from engine import Verification
from engine.app.times import parse_time
from engine.app.verifier import verify_in_a_process
from engine.store.logindex import LogFilter, is_store_url, open_log_index

from ..keys import key_hint
from ..rows import UNREADABLE, readable
from ..text import plain, visible
from ..widgets.app_header import AppHeader
from ..widgets.key_footer import KeyFooter
from ..widgets.log_view import LogView, missing_line
from ..widgets.timeline import Timeline
from .base import EngineScreen
from .detail import DetailScreen

__all__ = ["ArrowLogScreen", "parse_filter"]

_KEYS = ("arrow", "card", "package", "call", "target", "outcome", "since", "until", "text")
#: Every outcome a log row can have; a tool call's resolution (SPEC §9) is also
#: ``answered`` or ``failed``.
OUTCOMES = ("ok", "queued", "held", "denied", "rate-limited", "approved", "rejected", "expired",
            "cancelled", "suppressed", "answered", "failed")


def parse_filter(text: str, now: float) -> LogFilter:
    """``card:c1 outcome:denied since:10m deploy`` → a `LogFilter`.

    Words ``key:value`` filter by a column (``arrow``, ``card``, ``package``,
    ``call``, ``target``, ``outcome``, ``since``, ``until``, ``text``); other
    words are free text, matched case-insensitively in the payload, card,
    target, call, code and reason. Times are seconds since the epoch,
    ``YYYY-MM-DD[THH:MM[:SS]]`` (UTC) or a span back from now (``30s``,
    ``10m``, ``2h``, ``1d``).

    Raises:
        ValueError: naming the word that is not understood: an unknown key,
            an empty value, an unknown outcome, a key given twice, or
            ``since`` after ``until``.
    """
    values: dict[str, object] = {}
    free: list[str] = []
    try:
        words = shlex.split(text)  # card:"a b" or card:'a b' for a value with spaces
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc} (quote a value with spaces as key:\"a b\")") from exc
    for word in words:
        key, sep, value = word.partition(":")
        if not sep or (key not in _KEYS and (not key.isidentifier() or value.startswith("//"))):
            free.append(word)  # a URL, a path, a word: free text
            continue
        if key not in _KEYS:
            raise ValueError(f"{word!r}: no filter key {key!r}; use one of {', '.join(_KEYS)} "
                             "(other words are free text)")
        if not value:
            raise ValueError(f"{word!r}: {key}: needs a value")
        if key in values:
            raise ValueError(f"{word!r}: {key}: is given twice")
        if key == "outcome" and value not in OUTCOMES:
            raise ValueError(f"{word!r}: no outcome {value!r}; outcomes are "
                             + ", ".join(OUTCOMES))
        values[key] = _time(value, now, word) if key in ("since", "until") else value
    if free:
        if "text" in values:
            raise ValueError(f"{' '.join(free)!r}: free text and text: together; use one")
        values["text"] = " ".join(free)
    since, until = values.get("since"), values.get("until")
    if isinstance(since, float) and isinstance(until, float) and since > until:
        raise ValueError("since: is after until: — no row can match; swap them")
    return LogFilter(**values)  # type: ignore[arg-type]


def _new_file(stem: str) -> tuple[str, TextIO]:
    """A file made here for writing, ``stem.jsonl`` or the first free ``stem-N.jsonl``.

    Made with ``x`` (never over a file that exists), so two exports in one second
    each get a file of their own.
    """
    number = 1
    while True:
        path = os.path.abspath(f"{stem}.jsonl" if number == 1 else f"{stem}-{number}.jsonl")
        try:
            return path, open(path, "x", encoding="utf-8")  # noqa: SIM115 - the caller closes it
        except FileExistsError:
            number += 1


def _time(value: str, now: float, word: str) -> float:
    try:
        return parse_time(value.strip(), now, naive="utc")  # the TUI shows times in UTC
    except ValueError:
        raise ValueError(f"{word!r}: a time is seconds, YYYY-MM-DDTHH:MM or 10m / 2h / 1d ago"
                         ) from None


class ArrowLogScreen(EngineScreen):
    """One arrow's log or all of it, with filters and the chain's verification."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: every key typed after it is the filter's (EngineScreen.open_box).
        Binding("slash", "focus_filter", "Filter", id="log.filter", priority=True,
                tooltip="Filter by card, package, call, outcome, arrow and time"),
        Binding("escape", "focus_log", "Back to rows", show=False, id="log.back"),
        Binding("V", "verify", "Verify chain", id="log.verify",
                tooltip="Check every row's hash chain and the anchor"),
        Binding("c", "copy_row", "Copy row", id="log.copy",
                tooltip="Copy the selected row (as JSON) to the clipboard"),
        Binding("p", "copy_payload", "Copy payload", id="log.copy_payload",
                tooltip="Copy only the selected row's payload (its text) to the clipboard"),
        Binding("x", "export", "Export", id="log.export",
                tooltip="Write the rows under the filter to a JSON Lines file here"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""
        self._ready = False
        self._pending_filter: str | None = None

    def compose(self) -> ComposeResult:
        yield AppHeader("arrow log")
        yield Input(placeholder="filter: card:… target:… call:… outcome:… arrow:… since:10m "
                                "until:… or free text", id="filter")
        yield Static("", id="filter-status")
        yield Static("chain: not verified yet", id="verify")
        yield Timeline(id="timeline")
        yield Static("", id="log-header")
        yield LogView(open_log_index(self.gate.db_path), id="rows")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._ready = True
        view = self.query_one(LogView)
        view.focus()
        self.watch(view, "scroll_x", self._show_header)
        self._show_header()
        self.query_one(Timeline).show(open_log_index(self.gate.db_path))
        if is_store_url(self.gate.db_path):
            # Other engines' consent changes arrive through the store's change
            # feed (EngineChanged); a refused call changes nothing but the log,
            # so the feed does not announce it: look for new rows each second
            # (one max(seq) query without a filter).
            self.set_interval(1.0, self._look_for_rows)
        self.action_verify()
        if self._pending_filter is not None:
            self.apply_filter(self._pending_filter)

    def _look_for_rows(self) -> None:
        self.query_one(LogView).reload()

    def refresh_data(self) -> None:
        self.query_one(LogView).reload()
        self.query_one(Timeline).recount()

    def apply_filter(self, text: str) -> bool:
        """Show the rows matching ``text``; a filter that does not parse changes nothing."""
        if not self._ready:  # opened from another screen: apply once composed
            self._pending_filter = text
            return True
        status = self.query_one("#filter-status", Static)
        try:
            log_filter = parse_filter(text, self.engine.now())
        except ValueError as exc:
            status.update(plain(f"filter not applied: {exc}", style="red"))
            return False
        self.filter_text = text
        self.query_one("#filter", Input).value = text
        self.query_one(LogView).use(open_log_index(self.gate.db_path, log_filter))
        self.query_one(Timeline).show(open_log_index(self.gate.db_path, log_filter))
        status.update(plain(f"showing: {text}" if text else "showing: every row"))
        self.query_one(LogView).focus()
        return True

    @on(Input.Submitted, "#filter")
    def _submitted(self, event: Input.Submitted) -> None:
        self.apply_filter(event.value.strip())

    @on(LogView.CountChanged)
    def _count(self, event: LogView.CountChanged) -> None:
        self._rows_logged()
        shown = "every row" if not self.filter_text else self.filter_text
        rows = "1 row" if event.count == 1 else f"{event.count:,} rows"
        self.query_one("#filter-status", Static).update(plain(f"{rows} · {shown}"))

    @on(LogView.ColumnsChanged)
    def _show_header(self, *_args: object) -> None:
        self.query_one("#log-header", Static).update(
            Text(self.query_one(LogView).header(), style="bold", no_wrap=True, end=""))

    @on(LogView.RowSelected)
    def _open(self, event: LogView.RowSelected) -> None:
        self.open_detail(event.seq)

    def row(self, seq: int, action: str = "log") -> dict[str, Any] | None:
        """Row ``seq`` as the TUI shows it (`readable`: fields altered by hand flagged);
        None, and the person told why under the title ``action``, when the log has none."""
        row = self.query_one(LogView).index.row(seq)
        if row is None:
            self.notify(missing_line(seq).strip(), title=action, severity="warning")
            return None
        return readable(row)

    def open_detail(self, seq: int) -> None:
        """Push the detail of row ``seq``."""
        row = self.row(seq, "log: detail")
        if row is not None:
            self.app.push_screen(DetailScreen(row))

    def action_copy_row(self) -> None:
        """Copy the selected row, whole, as JSON (the terminal's clipboard, OSC 52)."""
        seq = self.query_one(LogView).chosen("log: copy")
        if seq is None:
            return
        row = self.row(seq, "log: copy")
        if row is not None:
            # JSON escapes control characters: nothing raw reaches the terminal.
            self.app.copy_to_clipboard(json.dumps(row, ensure_ascii=True))
            self.notify(f"row {row['seq']} copied as JSON", title="log: copy")

    def action_copy_payload(self) -> None:
        """Copy the selected row's payload alone, as text (the terminal's clipboard, OSC 52).

        Line breaks and tabs are kept, as the payload is text a person pastes;
        every other control character is copied as its visible symbol, so a
        card's payload pasted into a shell cannot carry an escape sequence
        (one that ends a bracketed paste, say) along with it.
        """
        seq = self.query_one(LogView).chosen("log: copy payload")
        if seq is None:
            return
        row = self.row(seq, "log: copy payload")
        if row is None:
            return
        payload = row.get("payload")
        if "payload" in row.get(UNREADABLE, {}):
            self.notify(f"row {row['seq']}'s payload is unreadable (altered by hand; "
                        "`arrowgate log verify` names the row): open the row (enter) to see "
                        "what is stored, or copy it whole (c)", title="log: copy payload",
                        severity="warning")
            return
        if payload is None or payload == "":
            self.notify(f"row {row['seq']} has no payload", title="log: copy payload",
                        severity="warning")
            return
        raw = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        text = visible(raw, multiline=True)
        notes = []
        if text != raw:
            notes.append("control characters copied as visible symbols")
        whole = row.get("payload_bytes")
        if isinstance(whole, int) and whole > len(raw.encode("utf-8", "surrogatepass")):
            # A refused call's row keeps only the start of a long payload (SPEC §8).
            notes.append(f"the log kept only the start of its {whole:,} bytes")
        self.app.copy_to_clipboard(text)
        self.notify(f"payload of row {row['seq']} copied ({len(text):,} characters"
                    + "".join(f"; {n}" for n in notes) + ")", title="log: copy payload")

    @work(thread=True, group="export", exit_on_error=False, description="export the log")
    def action_export(self) -> None:
        """Write the rows under the current filter to ``arrowgate-log-<time>.jsonl`` here
        (``-2``, ``-3`` ... after the time when that file exists: each press is an export)."""
        index = open_log_index(self.gate.db_path, self.query_one(LogView).index.filter)
        count = index.refresh()
        path, out = _new_file(time.strftime("arrowgate-log-%Y%m%d-%H%M%S", time.gmtime()))
        with out:
            for start in range(0, count, 1000):
                for row in map(readable, index.page(start, start + 1000)):
                    out.write(json.dumps(row, ensure_ascii=True) + "\n")
        index.close()
        self.app.call_from_thread(self.notify, f"{count:,} rows written to {path}",
                                  title="log: export")

    def action_focus_filter(self) -> None:
        """Edit the filter."""
        self.typing()
        self.open_box(self.query_one("#filter", Input))

    def action_focus_log(self) -> None:
        """Back to the rows."""
        self.query_one(LogView).focus()

    @work(exclusive=True, group="verify", exit_on_error=False,
          description="verify the arrow log")
    async def action_verify(self) -> None:
        """Verify the hash chain and anchor in a process of its own.

        Hashing a million rows takes seconds of pure Python; in a thread it
        would hold the interpreter lock against scrolling.
        """
        self._verified(None)
        through = self.engine.log_end()
        self._verified(await verify_in_a_process(self.gate.db_path), through)

    #: The last verification and the newest row logged as it started, or None.
    _verification: tuple[Verification, int] | None = None

    def _verified(self, result: Verification | None, through: int | None = None) -> None:
        label = self.query_one("#verify", Static)
        self._verification = None
        if result is not None:
            self.gate.store_verified(result)  # every screen's header says a finding
        if result is None:
            label.update("chain: verifying…")
        elif result.ok:
            # Say "and the anchor" only when there is one to have checked.
            anchor = self.gate.anchor_path
            anchored = anchor is not None and os.path.exists(anchor)
            text = f"chain ✓ verified: {result.rows:,} rows" \
                + (" and the anchor" if anchored else " (no anchor file)")
            if through is not None:
                self._verification = (result, through)
                if self.engine.log_end() > through:
                    # Rows logged since it started may not have been read by it.
                    key = key_hint(self, "log.verify")
                    text += f" · rows logged since are not verified yet ({key})"
            label.update(plain(text, style="green"))
        else:
            # A finding of the consent history (a grant written by hand) names no row.
            at = f" (first bad row {result.first_bad})" if result.first_bad is not None else ""
            label.update(plain(f"chain ✗ BROKEN: {result.problem}{at}", style="red"))

    def _rows_logged(self) -> None:
        """New rows shown: a verified label says they are not verified yet (once)."""
        if self._verification is not None:
            result, through = self._verification
            if self.engine.log_end() > through and "logged since" not in \
                    str(self.query_one("#verify", Static).render()):
                self._verified(result, through)
