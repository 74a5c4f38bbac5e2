"""A list of rows that fits its width: a cell cut to its column's share ends with "…"."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets import DataTable

from ..cursor import nearest
from ..text import Ended

__all__ = ["MINIMUM", "FittedTable", "cut", "shares"]

#: Cells a column keeps however narrow the table: a few characters and the "…".
MINIMUM = 4


def shares(natural: Sequence[int], room: int) -> list[int]:
    """Each column's width: what it needs (``natural``) while all fit in ``room`` cells;
    else the widest give way first, a cell at a time, none below `MINIMUM` (nor below
    what it needs). Columns that cannot all fit keep their minimum (the table scrolls)."""
    widths = list(natural)
    over = sum(widths) - room
    while over > 0:
        widest = max(widths)
        if widest <= MINIMUM:
            break
        # Every column at the widest width gives one cell: the widest meet, then share.
        for i, width in enumerate(widths):
            if width == widest and over > 0:
                widths[i] -= 1
                over -= 1
    return widths


def cut(cell: Text | Ended, width: int) -> Text:
    """``cell`` on one line of at most ``width`` cells: whole, or cut with "…" at its end
    (an `Ended` cell before its ending, which stays, while the column leaves room for
    it and a character)."""
    if isinstance(cell, Ended):
        if cell.cell_len <= width:
            return cell.whole()
        room = width - cell.ending.cell_len
        if room < 2:
            return cut(cell.whole(), width)
        return Text.assemble(cut(cell.head, room), cell.ending, end="")
    if cell.cell_len <= width:
        return cell
    shown = cell.copy()
    shown.truncate(width, overflow="ellipsis")
    return shown


class FittedTable(DataTable[object]):
    """A `DataTable` of one-line text cells whose columns always share its width.

    A `DataTable` sizes each column to its widest cell and scrolls sideways when they do
    not fit: at 80 columns a list's last column (a prompt's text) was cut by the
    screen's edge, and what was left of it read as the whole text. Here each column
    takes its `shares` of the width, and a cell or a heading cut to it says so with "…"
    (`cut`); the rows are laid out again when the table's width changes. Cells are
    `Text`, or `Ended` where an ending must stay in view (a text's count of lines): a
    card's strings are made inert by the caller (`tui.text.plain`).
    """

    def __init__(self, *labels: str, id: str | None = None) -> None:  # noqa: A002 - Textual's
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._labels = labels
        #: Each row's cells, whole, by its key, in the order shown.
        self._rows: dict[str, list[Text | Ended]] = {}
        #: The widths the columns were laid out at, and the size they were laid out for.
        self._widths: list[int] = []
        self._laid_out_for: tuple[int, int] | None = None

    def show(self, rows: Sequence[tuple[str, Sequence[Text | Ended]]], *,
             another: bool = False) -> str | None:
        """Show ``rows``, each ``(key, one Text a column)``, in place of those shown; the
        cursor stays on its row's key when that row is still shown, else it goes to the
        nearest row still shown (`tui.cursor.nearest`), never back to the first.

        Args:
            another: the rows are another list's (the arrows of another node), not the
                same list read again: a row of the old list not in it has no nearest row
                there, and the cursor goes to the first.

        Returns:
            The key of the row the cursor was on when that row is no longer shown (the
            caller says so, and which row the cursor is on now), else None.
        """
        before, under = list(self._rows), self._under_cursor()
        self._rows = {key: list(cells) for key, cells in rows}
        self._lay_out()
        if another or under is None or under in self._rows or under not in before:
            return None
        if self._rows:
            # Emptied and refilled, the table put its cursor on the first row.
            self.move_cursor(row=nearest(under, before, list(self._rows)))
        return under

    def _under_cursor(self) -> str | None:
        """The key of the row under the cursor, or None for an empty table."""
        if not self.row_count or self.cursor_row < 0:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def set_cell(self, key: str, column: int, value: Text | Ended) -> None:
        """Put ``value`` in row ``key``'s ``column`` (by position), cut to the column."""
        cells = self._rows.get(key)
        if cells is not None:
            cells[column] = value
            self.update_cell(key, self.ordered_columns[column].key,
                             cut(value, self._widths[column]))

    def _room(self) -> int | None:
        """The cells the columns' text may take, or None before the table has a size."""
        width, height = self.size
        if not width:
            return None
        # A vertical scrollbar takes cells once the rows (and the header) overflow.
        bar = self.styles.scrollbar_size_vertical if len(self._rows) + 1 > height else 0
        return width - bar - 2 * self.cell_padding * len(self._labels)

    def _lay_out(self) -> None:
        natural = [cell_len(label) for label in self._labels]
        for cells in self._rows.values():
            natural = [max(n, cell.cell_len) for n, cell in zip(natural, cells)]
        room = self._room()
        widths = natural if room is None else shares(natural, room)
        self._laid_out_for = (self.size.width, self.size.height)
        under_cursor = self._under_cursor()
        if widths != self._widths:
            self._widths = widths
            self.clear(columns=True)
            for label, width in zip(self._labels, widths):
                # A heading cut by its column's share says so, as its cells do.
                self.add_column(cut(Text(label), width), width=width, key=label)
        else:
            self.clear()
        for key, cells in self._rows.items():
            self.add_row(*(cut(cell, width) for cell, width in zip(cells, widths)), key=key)
        if under_cursor is not None and under_cursor in self.rows:
            self.move_cursor(row=self.get_row_index(under_cursor))

    def on_resize(self, _event: events.Resize) -> None:
        if (self.size.width, self.size.height) != self._laid_out_for:
            self._lay_out()
