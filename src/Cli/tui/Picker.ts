/**
 * A picker for the chat terminal UI (issue 34): a title, the query typed so far and a pi-tui
 * `SelectList` of the items matching it (Up/Down move, Enter picks, Esc or Ctrl-C closes). Used by
 * `/model`, `/resume` and Ctrl-R (history search).
 *
 * @since 0.1.0
 */
import type { SelectItem, SelectListTheme } from "@mariozechner/pi-tui/dist/components/select-list.js"
import { SelectList } from "@mariozechner/pi-tui/dist/components/select-list.js"
import { decodeKittyPrintable, matchesKey } from "@mariozechner/pi-tui/dist/keys.js"
import type { Component } from "@mariozechner/pi-tui/dist/tui.js"
import { truncateToWidth } from "@mariozechner/pi-tui/dist/utils.js"
import type * as Style from "./Style.js"

/** rows of items shown at once */
const MAX_VISIBLE = 10

/**
 * What a picker offers and what it does with the choice.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly title: string
  /** the items for a query (already filtered and ordered) */
  readonly items: (query: string) => ReadonlyArray<SelectItem>
  readonly onPick: (item: SelectItem) => void
  readonly onClose: () => void
}

/**
 * Items whose value or label contains `query` (case-insensitive), in their order.
 *
 * @since 0.1.0
 * @category utils
 */
export const containing = (items: ReadonlyArray<SelectItem>, query: string): ReadonlyArray<SelectItem> => {
  const q = query.toLowerCase()
  return items.filter((i) => i.value.toLowerCase().includes(q) || i.label.toLowerCase().includes(q))
}

/**
 * The picker component (see the module doc).
 *
 * @since 0.1.0
 * @category components
 */
export class Picker implements Component {
  private query = ""
  private list: SelectList

  constructor(
    private readonly style: Style.Style,
    private readonly theme: SelectListTheme,
    private readonly options: Options
  ) {
    this.list = this.makeList()
  }

  private makeList(): SelectList {
    const list = new SelectList([...this.options.items(this.query)], MAX_VISIBLE, this.theme)
    list.onSelect = (item) => this.options.onPick(item)
    list.onCancel = () => this.options.onClose()
    return list
  }

  invalidate(): void {
    this.list.invalidate()
  }

  render(width: number): Array<string> {
    const s = this.style
    return [
      truncateToWidth(s.cyan(`╭─ ${this.options.title} `) + s.dim("(type to filter · ↑↓ · Enter picks · Esc closes)"), width),
      truncateToWidth(`${s.cyan("│")} ${s.bold(`filter: ${this.query}`)}`, width),
      ...this.list.render(Math.max(10, width))
    ]
  }

  handleInput(data: string): void {
    if (matchesKey(data, "ctrl+c")) return this.options.onClose()
    if (matchesKey(data, "backspace")) {
      if (this.query === "") return
      this.query = this.query.slice(0, -1)
      this.list = this.makeList()
      return
    }
    const printable = decodeKittyPrintable(data) ?? data
    if (printable.length === 1 && printable >= " " && printable !== "\x7f") {
      this.query += printable
      this.list = this.makeList()
      return
    }
    this.list.handleInput(data)
  }
}
