//! Aligned text tables.

/// A table of text cells printed with aligned columns; numbers are right-aligned.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table whose first row is `headers`.
    pub fn new<S: ToString>(headers: &[S]) -> Table {
        Table {
            rows: vec![headers.iter().map(ToString::to_string).collect()],
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (index, row) in self.rows.iter().enumerate() {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let pad = widths[c].saturating_sub(cell.chars().count());
                let numeric = index > 0 && looks_numeric(cell);
                if c > 0 {
                    line.push_str("  ");
                }
                if numeric {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if c + 1 < row.len() {
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

fn looks_numeric(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn columns_align_and_numbers_go_right() {
        let mut table = Table::new(&["name", "value"]);
        table.row(vec!["a".into(), "5".into()]);
        table.row(vec!["longer".into(), "1234".into()]);
        assert_eq!(
            table.render(),
            "name    value\na           5\nlonger   1234\n"
        );
    }
}
