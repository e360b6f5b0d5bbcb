//! Plain-text tables for the terminal: columns padded to their widest cell.

/// A table being filled row by row.
pub struct Table {
    header: Vec<String>,
    /// Per column: right-aligned (numbers) or not.
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns; a column whose name starts with `>` is right-aligned.
    pub fn new(columns: &[&str]) -> Self {
        Table {
            header: columns
                .iter()
                .map(|c| c.trim_start_matches('>').to_string())
                .collect(),
            right: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines, each starting with `indent`.
    pub fn render(&self, indent: &str) -> String {
        self.render_within(indent, usize::MAX)
    }

    /// The table as lines of at most `width` characters where it can: the last column's
    /// text is wrapped at word ends onto lines of its own column (it never gets narrower
    /// than 24, and a word longer than that stays whole).
    pub fn render_within(&self, indent: &str, width: usize) -> String {
        let mut widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain([&self.header[c]])
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let last = widths.len().saturating_sub(1);
        let before: usize =
            indent.chars().count() + widths[..last].iter().map(|w| w + 2).sum::<usize>();
        widths[last] = widths[last].min(width.saturating_sub(before).max(24));
        let one_line = |cells: &[String]| {
            let mut out = indent.to_string();
            for (c, width) in widths.iter().enumerate() {
                let cell = cells.get(c).map_or("", String::as_str);
                if c > 0 {
                    out.push_str("  ");
                }
                if self.right[c] {
                    out.push_str(&format!("{cell:>width$}"));
                } else {
                    out.push_str(&format!("{cell:<width$}"));
                }
            }
            out.trim_end().to_string()
        };
        let line = |cells: &[String]| {
            let text = cells.get(last).map_or("", String::as_str);
            if text.chars().count() <= widths[last] {
                return one_line(cells);
            }
            let wrapped = wrap(text, widths[last]);
            let mut lines = Vec::new();
            for (index, text) in wrapped.iter().enumerate() {
                let mut cells: Vec<String> = if index == 0 {
                    cells.to_vec()
                } else {
                    vec![String::new(); last]
                };
                cells.resize(last + 1, String::new());
                cells[last] = text.clone();
                lines.push(one_line(&cells));
            }
            lines.join("\n")
        };
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push('\n');
            out.push_str(&line(row));
        }
        out
    }
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word stays
/// whole on a line of its own); one empty line for an empty text.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let current = lines.last_mut().expect("one line at least");
        let length = current.chars().count();
        if length == 0 {
            current.push_str(word);
        } else if length + 1 + word.chars().count() <= width {
            current.push(' ');
            current.push_str(word);
        } else {
            lines.push(word.to_string());
        }
    }
    lines
}

/// A duration for people: nanoseconds to seconds, three significant digits or so (whole
/// nanoseconds below a microsecond, where a tenth of a microsecond would hide them).
pub fn duration(elapsed: std::time::Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    if elapsed < std::time::Duration::from_micros(1) {
        format!("{} ns", elapsed.as_nanos())
    } else if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} us", seconds * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_the_unit_of_their_size() {
        use std::time::Duration;
        assert_eq!(duration(Duration::from_nanos(150)), "150 ns");
        assert_eq!(duration(Duration::from_nanos(1_500)), "1.5 us");
        assert_eq!(duration(Duration::from_nanos(19_611_647)), "19.61 ms");
        assert_eq!(duration(Duration::from_millis(2_500)), "2.50 s");
    }

    #[test]
    fn wrapping_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("", 7), [""]);
        assert_eq!(wrap("unbreakable word", 4), ["unbreakable", "word"]);
    }

    #[test]
    fn a_table_within_a_width_wraps_its_last_column() {
        let mut table = Table::new(&["name", "what"]);
        table.row(vec!["a".into(), "word ".repeat(20)]);
        let text = table.render_within("  ", 40);
        assert!(text.lines().count() > 2, "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 40, "{line:?} of\n{text}");
        }
        assert!(
            text.contains("\n        word"),
            "continuations align:\n{text}"
        );
    }
}

/// How `compare` and `rank` print.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for the terminal.
    Text,
    /// GitHub-flavoured Markdown tables.
    Markdown,
}

/// `rows` under `header` (a column named `>...` is right-aligned) as aligned text or a
/// GitHub Markdown table.
pub fn table(header: &[&str], rows: Vec<Vec<String>>, format: Format) -> String {
    match format {
        Format::Text => {
            let mut table = Table::new(header);
            for row in rows {
                table.row(row);
            }
            table.render("") + "\n"
        }
        Format::Markdown => {
            let names: Vec<&str> = header.iter().map(|h| h.trim_start_matches('>')).collect();
            let rule: Vec<&str> = header
                .iter()
                .map(|h| if h.starts_with('>') { "---:" } else { "---" })
                .collect();
            let mut text = format!("| {} |\n| {} |\n", names.join(" | "), rule.join(" | "));
            for row in rows {
                text.push_str(&format!("| {} |\n", row.join(" | ")));
            }
            text
        }
    }
}

/// A GitHub-flavoured Markdown table; a column whose name starts with `>` is right-aligned
/// (as [`Table::new`]). A `|` inside a cell is escaped.
pub fn markdown_table(columns: &[&str], rows: &[Vec<String>]) -> String {
    let escape = |cell: &str| cell.replace('|', "\\|");
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(
        columns
            .iter()
            .map(|c| escape(c.trim_start_matches('>')))
            .collect(),
    );
    out.push_str(&line(
        columns
            .iter()
            .map(|c| if c.starts_with('>') { "---:" } else { "---" }.to_string())
            .collect(),
    ));
    for row in rows {
        out.push_str(&line(
            (0..columns.len())
                .map(|c| row.get(c).map_or(String::new(), |cell| escape(cell)))
                .collect(),
        ));
    }
    out
}

/// The mark after an engine's name in the tables of `rank` and `compare`.
pub const ENGINE_MARK: &str = " [engine]";

/// The legend line under a table that shows an engine.
pub fn engine_legend(markdown: bool) -> String {
    let line = format!(
        "{}: {}",
        ENGINE_MARK.trim(),
        timerbench_report::ENGINE_LEGEND.trim_start_matches("engine: ")
    );
    if markdown {
        format!("\n{line}")
    } else {
        format!("  {line}")
    }
}
