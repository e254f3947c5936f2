//! The pieces of text the written formats share: an aligned table, a series' name, a reading, a CSV field.

use serde_json::Number;

use super::cores::core_name;
use super::CapturedCounter;

/// The counter's name on one of its series: its own, or `NAME@cpuN` for a core's part.
pub(crate) fn series_name(c: &CapturedCounter, core: Option<u32>) -> String {
    match core {
        Some(core) => core_name(c.counter_name(), core),
        None => c.counter_name().to_owned(),
    }
}

/// A reading for a table: integers as they are, fractions to at most six decimals.
pub fn reading_text(value: &Number) -> String {
    match value.as_f64() {
        Some(f) if value.is_f64() => {
            let text = format!("{f:.6}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        _ => value.to_string(),
    }
}

/// A CSV field: quoted (with inner quotes doubled) when it holds a comma, a quote or a newline.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Text cells printed with aligned columns; numbers are right-aligned.
#[derive(Debug, Default, Clone)]
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

/// Whether a cell reads as a number (and so is right-aligned).
fn looks_numeric(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn readings_keep_integers_and_trim_fractions() {
        assert_eq!(reading_text(&Number::from(42)), "42");
        assert_eq!(reading_text(&Number::from_f64(2.5).unwrap()), "2.5");
        assert_eq!(reading_text(&Number::from_f64(1.0).unwrap()), "1");
        assert_eq!(
            reading_text(&Number::from_f64(0.1234567).unwrap()),
            "0.123457"
        );
    }

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
