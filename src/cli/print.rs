//! How the CLI prints: JSON for scripts (`--json`, [`print_json`]), ids only (`-q`,
//! [`ListOut`]), and tables for people ([`table`]: a grid on a terminal, plain aligned
//! columns in a pipe).

use std::io::IsTerminal;
use unicode_width::UnicodeWidthStr;

/// How a list command prints: a table for people, `--json`, or `-q` (ids only).
///
/// One rule for scripts: every list command's `--json` prints a JSON array of its items
/// (`jq '.[]'`), never an object around them; an empty list is `[]`. A paged read
/// (`runs events`, `run events`) prints its page, an object, as the cursor belongs beside
/// the items.
#[derive(Debug, Default, clap::Args)]
pub struct ListOut {
    /// Print only the ids, one per line (for scripts: `-q | xargs …`)
    #[arg(short, long)]
    pub quiet: bool,
}

impl ListOut {
    /// Print `items` (the list's items, in order) as a JSON array or, with `-q`, each
    /// item's `field`, one per line; `true` when printed (no table wanted).
    pub fn done(&self, json: bool, items: &[serde_json::Value], field: &str) -> bool {
        if json {
            print_json(&serde_json::Value::Array(items.to_vec()));
            return true;
        }
        if !self.quiet {
            return false;
        }
        for item in items {
            match item.get(field) {
                Some(serde_json::Value::String(id)) => println!("{}", crate::base::term::safe_line(id)),
                Some(serde_json::Value::Number(n)) => println!("{n}"),
                _ => {}
            }
        }
        true
    }

    /// [`ListOut::done`] for a serializable list.
    pub fn done_with<T: serde::Serialize>(&self, json: bool, items: &[T], field: &str) -> bool {
        if !(json || self.quiet) {
            return false;
        }
        let v: Vec<serde_json::Value> = items.iter().map(|i| serde_json::to_value(i).unwrap_or_default()).collect();
        self.done(json, &v, field)
    }
}

/// The items of an operation's answer that holds its list under `key` (`{"servers": […]}`).
pub fn items_of(v: &serde_json::Value, key: &str) -> Vec<serde_json::Value> {
    v.get(key).and_then(|a| a.as_array()).cloned().unwrap_or_default()
}

/// Print JSON to stdout (control and invisible characters inside strings as `\u` escapes).
pub fn print_json(v: &serde_json::Value) {
    println!("{}", crate::base::term::json_safe(&serde_json::to_string_pretty(v).unwrap_or_default()));
}

/// A table for people: a grid on a terminal, plain aligned columns (one row per line, no
/// borders, nothing wrapped, `-` for an empty cell) when stdout is a pipe or a file, so
/// `grep`, `awk` and `cut` read it. `HAL0_FORCE_TTY` set (not empty) asks for the grid anyway. Every header and
/// cell is shown through [`crate::base::term::safe`] (plain: [`crate::base::term::safe_line`]).
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table { header: header.iter().map(|h| h.to_string()).collect(), rows }
}

/// A table to print (`println!("{t}")`); see [`table`].
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Whether what hal0 prints goes to a person at a terminal.
pub fn for_terminal() -> bool {
    std::io::stdout().is_terminal() || std::env::var_os("HAL0_FORCE_TTY").is_some_and(|v| !v.is_empty())
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if for_terminal() {
            return self.grid().fmt(f);
        }
        // An empty cell is `-`, so every row has as many words as columns for `awk`.
        let safe =
            |c: &str| if c.trim().is_empty() { "-".into() } else { crate::base::term::safe_line(c).into_owned() };
        let lines: Vec<Vec<String>> =
            std::iter::once(&self.header).chain(&self.rows).map(|r| r.iter().map(|c| safe(c)).collect()).collect();
        let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> =
            (0..columns).map(|i| lines.iter().filter_map(|l| l.get(i)).map(|c| c.width()).max().unwrap_or(0)).collect();
        for (n, line) in lines.iter().enumerate() {
            let mut out = String::new();
            for (i, cell) in line.iter().enumerate() {
                out.push_str(cell);
                if i + 1 < line.len() {
                    out.push_str(&" ".repeat(widths[i] - cell.width() + 2));
                }
            }
            if n > 0 {
                f.write_str("\n")?;
            }
            f.write_str(out.trim_end())?;
        }
        Ok(())
    }
}

impl Table {
    /// The grid a person at a terminal sees (`UTF8_FULL_CONDENSED`, fitted to the width).
    fn grid(&self) -> comfy_table::Table {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_header(self.header.iter().map(|h| crate::base::term::safe_line(h).into_owned()).collect::<Vec<_>>());
        for r in &self.rows {
            t.add_row(r.iter().map(|c| crate::base::term::safe(c).into_owned()).collect::<Vec<_>>());
        }
        t
    }
}
