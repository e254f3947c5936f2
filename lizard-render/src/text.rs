//! The pieces of text the written formats share: an aligned table, a series' name, a reading, a CSV field.

use serde_json::Number;

use lizard_core::capture::cores::core_name;
use lizard_core::capture::CapturedCounter;

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

/// An integer with its thousands grouped, as `perf stat` prints counts: `1,234,567`.
pub fn grouped(n: i128) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A time in nanoseconds in the unit that reads best, three decimals: `("602.636", "ms")`.
pub fn time_text(ns: f64) -> (String, &'static str) {
    let (scale, unit) = match ns.abs() {
        t if t >= 1e9 => (1e9, "s"),
        t if t >= 1e6 => (1e6, "ms"),
        t if t >= 1e3 => (1e3, "us"),
        _ => return (format!("{ns:.0}"), "ns"),
    };
    (format!("{:.3}", ns / scale), unit)
}

/// A rate per second with an SI prefix, three significant digits: `58.6 K/s`, `2.41 G/s`, `0 /s`.
pub fn rate_text(per_s: f64) -> String {
    if !per_s.is_finite() {
        return String::new();
    }
    let (scale, prefix) = match per_s.abs() {
        r if r >= 1e9 => (1e9, "G"),
        r if r >= 1e6 => (1e6, "M"),
        r if r >= 1e3 => (1e3, "K"),
        _ => (1.0, ""),
    };
    format!("{} {prefix}/s", significant(per_s / scale))
}

/// `value` to three significant digits, without trailing zeros: `58.6`, `2.41`, `123`, `0`.
pub fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return "0".to_owned();
    }
    let decimals = (2 - value.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{value:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
        false => text,
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
    fn numbers_read_as_perf_stat_prints_them() {
        assert_eq!(grouped(602_635_659), "602,635,659");
        assert_eq!(grouped(-1234), "-1,234");
        assert_eq!(grouped(999), "999");
        assert_eq!(time_text(602_635_659.0), ("602.636".to_owned(), "ms"));
        assert_eq!(time_text(1_500_000_000.0), ("1.500".to_owned(), "s"));
        assert_eq!(time_text(750.0), ("750".to_owned(), "ns"));
        assert_eq!(rate_text(58_640.0), "58.6 K/s");
        assert_eq!(rate_text(2_414_000_000.0), "2.41 G/s");
        assert_eq!(rate_text(0.0), "0 /s");
        assert_eq!(rate_text(9.81), "9.81 /s");
        assert_eq!(significant(0.01234), "0.0123");
        assert_eq!(significant(123.4), "123");
    }

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
