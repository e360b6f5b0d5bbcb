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
        let widths: Vec<usize> = (0..self.header.len())
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
        let line = |cells: &[String]| {
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
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push('\n');
            out.push_str(&line(row));
        }
        out
    }
}

/// A duration for people: microseconds to seconds, three significant digits or so.
pub fn duration(elapsed: std::time::Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} us", seconds * 1e6)
    }
}
