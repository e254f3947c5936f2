//! C `printf` formatting of a format string with arguments taken from a message's 32-bit words, as a
//! 32-bit target passes them to STMLib: one word per `int`, `long`, pointer or `char`; two words, most
//! significant first, for `long long` and every floating-point argument (`double`, and `float` promoted
//! to `double`).
//!
//! Conversions: `d i u o x X c s p f F e E g G %`, with flags `- + space # 0`, a width and a precision
//! (numbers or `*`, which take a word), and the length modifiers `hh h l ll j z t L q`. `%n` and the
//! hexadecimal float `%a` are refused ([`Undecodable::UnsupportedConversion`]).

use alloc::string::String;
use core::fmt::Write;

use super::{StringArgs, Undecodable};

/// Reads arguments from words, in order.
pub(crate) struct Args<'a> {
    words: &'a [u32],
    next: usize,
}

impl<'a> Args<'a> {
    pub(crate) fn new(words: &'a [u32]) -> Self {
        Args { words, next: 0 }
    }

    /// Words used so far.
    pub(crate) fn used(&self) -> usize {
        self.next
    }

    /// `n` more words are needed: an error when the message has fewer left.
    fn need(&self, n: usize) -> Result<(), Undecodable> {
        if self.next + n > self.words.len() {
            return Err(Undecodable::ArgumentCount {
                expected: self.next + n,
                received: self.words.len(),
            });
        }
        Ok(())
    }

    fn word(&mut self) -> Result<u32, Undecodable> {
        self.need(1)?;
        self.next += 1;
        Ok(self.words[self.next - 1])
    }

    fn wide(&mut self) -> Result<u64, Undecodable> {
        self.need(2)?;
        let hi = self.word()?;
        let lo = self.word()?;
        Ok((u64::from(hi) << 32) | u64::from(lo))
    }

    /// Skips words to the next word boundary of a string argument sent as bytes.
    pub(crate) fn words(&self) -> &'a [u32] {
        &self.words[self.next..]
    }

    pub(crate) fn advance(&mut self, words: usize) {
        self.next = (self.next + words).min(self.words.len());
    }
}

#[derive(Default, Clone, Copy)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    wide: bool,
    half: u8,
}

/// The most characters one conversion may produce; larger widths and precisions are clamped so that a
/// hostile format string cannot make the decoder allocate without bound.
const MAX_FIELD: usize = 512;

/// Formats `format` into `out` with arguments from `args`; `%s` arguments come from `strings`.
pub(crate) fn format(
    format: &[u8],
    args: &mut Args<'_>,
    strings: &mut dyn StringArgs,
    out: &mut String,
) -> Result<(), Undecodable> {
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        i += 1;
        if c != b'%' {
            push_byte(out, c);
            continue;
        }
        let mut spec = Spec::default();
        // Flags.
        while let Some(&f) = format.get(i) {
            match f {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        // Width.
        if format.get(i) == Some(&b'*') {
            i += 1;
            let w = args.word()? as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = Some((w.unsigned_abs() as usize).min(MAX_FIELD));
        } else {
            spec.width = number(format, &mut i);
        }
        // Precision.
        if format.get(i) == Some(&b'.') {
            i += 1;
            if format.get(i) == Some(&b'*') {
                i += 1;
                let p = args.word()? as i32;
                spec.precision = (p >= 0).then_some((p as usize).min(MAX_FIELD));
            } else {
                spec.precision = Some(number(format, &mut i).unwrap_or(0));
            }
        }
        // Length.
        loop {
            match format.get(i) {
                Some(b'l') if format.get(i + 1) == Some(&b'l') => {
                    spec.wide = true;
                    i += 2;
                }
                Some(b'L' | b'q' | b'j') => {
                    spec.wide = true;
                    i += 1;
                }
                Some(b'h') => {
                    spec.half += 1;
                    i += 1;
                }
                Some(b'l' | b'z' | b't') => i += 1,
                _ => break,
            }
        }
        let Some(&conv) = format.get(i) else {
            return Err(Undecodable::UnsupportedConversion { conversion: '%' });
        };
        i += 1;
        let start = out.len();
        match conv {
            b'%' => out.push('%'),
            b'd' | b'i' => {
                let v = if spec.wide {
                    args.wide()? as i64
                } else {
                    let w = args.word()?;
                    match spec.half {
                        0 => i64::from(w as i32),
                        1 => i64::from(w as i16),
                        _ => i64::from(w as i8),
                    }
                };
                integer(out, &spec, v < 0, v.unsigned_abs(), 10, false, "");
            }
            b'u' | b'o' | b'x' | b'X' => {
                let v = if spec.wide {
                    args.wide()?
                } else {
                    let w = args.word()?;
                    match spec.half {
                        0 => u64::from(w),
                        1 => u64::from(w as u16),
                        _ => u64::from(w as u8),
                    }
                };
                let (radix, upper, prefix) = match conv {
                    b'o' => (8, false, if spec.alt && v != 0 { "0" } else { "" }),
                    b'x' => (16, false, if spec.alt && v != 0 { "0x" } else { "" }),
                    b'X' => (16, true, if spec.alt && v != 0 { "0X" } else { "" }),
                    _ => (10, false, ""),
                };
                spec.plus = false;
                spec.space = false;
                integer(out, &spec, false, v, radix, upper, prefix);
            }
            b'p' => {
                let v = args.word()?;
                spec.plus = false;
                spec.space = false;
                spec.precision = None;
                integer(out, &spec, false, u64::from(v), 16, false, "0x");
            }
            b'c' => {
                let v = args.word()?;
                let mut one = [0u8; 1];
                one[0] = v as u8;
                pad_bytes(out, &spec, &one);
            }
            b's' => {
                let text = strings.next_string(args)?;
                let text = match spec.precision {
                    Some(p) => &text[..p.min(text.len())],
                    None => text,
                };
                pad_bytes(out, &spec, text);
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let v = f64::from_bits(args.wide()?);
                float(out, &spec, v, conv);
            }
            other => {
                return Err(Undecodable::UnsupportedConversion {
                    conversion: other as char,
                })
            }
        }
        debug_assert!(out.len() >= start);
    }
    Ok(())
}

/// A decimal number at `format[*i..]`, clamped to [`MAX_FIELD`].
fn number(format: &[u8], i: &mut usize) -> Option<usize> {
    let mut value: Option<usize> = None;
    while let Some(d) = format.get(*i).filter(|b| b.is_ascii_digit()) {
        value = Some((value.unwrap_or(0) * 10 + usize::from(d - b'0')).min(MAX_FIELD));
        *i += 1;
    }
    value
}

/// Appends a byte of a C string: ASCII as it is, other bytes as Latin-1 characters (the target's text is
/// not known to be UTF-8), control characters other than tab and newline as `\xNN`.
fn push_byte(out: &mut String, b: u8) {
    match b {
        b'\t' | b'\n' | 0x20..=0x7E => out.push(b as char),
        0x80..=0xFF => out.push(char::from(b)),
        _ => {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
}

fn pad(out: &mut String, n: usize, c: char) {
    for _ in 0..n {
        out.push(c);
    }
}

fn pad_bytes(out: &mut String, spec: &Spec, bytes: &[u8]) {
    let fill = spec.width.unwrap_or(0).saturating_sub(bytes.len());
    if !spec.left {
        pad(out, fill, ' ');
    }
    for &b in bytes {
        push_byte(out, b);
    }
    if spec.left {
        pad(out, fill, ' ');
    }
}

fn integer(
    out: &mut String,
    spec: &Spec,
    negative: bool,
    magnitude: u64,
    radix: u32,
    upper: bool,
    prefix: &str,
) {
    let mut digits = [0u8; 64];
    let mut n = 0;
    let mut v = magnitude;
    while v != 0 {
        let d = (v % u64::from(radix)) as u8;
        digits[n] = match d {
            0..=9 => b'0' + d,
            _ if upper => b'A' + d - 10,
            _ => b'a' + d - 10,
        };
        n += 1;
        v /= u64::from(radix);
    }
    // Precision: the least number of digits (0 with value 0 prints nothing).
    let min_digits = spec.precision.unwrap_or(1);
    let zeros = min_digits.saturating_sub(n);
    let sign = if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let body = sign.len() + prefix.len() + zeros + n;
    let fill = spec.width.unwrap_or(0).saturating_sub(body);
    let zero_fill = spec.zero && !spec.left && spec.precision.is_none();
    if !spec.left && !zero_fill {
        pad(out, fill, ' ');
    }
    out.push_str(sign);
    out.push_str(prefix);
    if zero_fill {
        pad(out, fill, '0');
    }
    pad(out, zeros, '0');
    for k in (0..n).rev() {
        out.push(digits[k] as char);
    }
    if spec.left {
        pad(out, fill, ' ');
    }
}

/// `%f %e %g` (and upper case) as C prints them.
fn float(out: &mut String, spec: &Spec, v: f64, conv: u8) {
    let upper = conv.is_ascii_uppercase();
    let mut body = String::new();
    if v.is_nan() || v.is_infinite() {
        let word = match (v.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        if v.is_sign_negative() && !v.is_nan() {
            body.push('-');
        } else if spec.plus {
            body.push('+');
        } else if spec.space {
            body.push(' ');
        }
        body.push_str(word);
        pad_bytes(
            out,
            &Spec {
                zero: false,
                ..*spec
            },
            body.as_bytes(),
        );
        return;
    }
    let precision = spec.precision.unwrap_or(6);
    let negative = v.is_sign_negative();
    let a = v.abs();
    match conv.to_ascii_lowercase() {
        b'f' => {
            let _ = write!(body, "{a:.precision$}");
            if spec.alt && precision == 0 {
                body.push('.');
            }
        }
        b'e' => exponent(&mut body, a, precision, spec.alt, upper),
        _ => {
            // %g: %e when the exponent is below -4 or at least the precision, else %f; trailing zeros
            // removed unless '#'.
            let p = if precision == 0 { 1 } else { precision };
            let x = if a == 0.0 {
                0
            } else {
                let mut probe = String::new();
                exponent(&mut probe, a, p - 1, false, false);
                probe
                    .rsplit('e')
                    .next()
                    .and_then(|e| e.parse::<i32>().ok())
                    .unwrap_or(0)
            };
            if x < -4 || x >= p as i32 {
                exponent(&mut body, a, p - 1, spec.alt, upper);
                if !spec.alt {
                    if let Some(e) = body.find(['e', 'E']) {
                        let (mantissa, exp) = body.split_at(e);
                        let trimmed = trim_zeros(mantissa);
                        body = alloc::format!("{trimmed}{exp}");
                    }
                }
            } else {
                let decimals = (p as i32 - 1 - x).max(0) as usize;
                let _ = write!(body, "{a:.decimals$}");
                if !spec.alt {
                    let trimmed = trim_zeros(&body).len();
                    body.truncate(trimmed);
                }
            }
        }
    }
    let sign = if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let fill = spec
        .width
        .unwrap_or(0)
        .saturating_sub(sign.len() + body.len());
    if !spec.left && !spec.zero {
        pad(out, fill, ' ');
    }
    out.push_str(sign);
    if !spec.left && spec.zero {
        pad(out, fill, '0');
    }
    out.push_str(&body);
    if spec.left {
        pad(out, fill, ' ');
    }
}

/// Removes trailing zeros after a decimal point, and the point if nothing follows it.
fn trim_zeros(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

/// `d.ddde±XX` with `precision` decimals.
fn exponent(out: &mut String, a: f64, precision: usize, alt: bool, upper: bool) {
    let mut text = String::new();
    let _ = write!(text, "{a:.precision$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    out.push_str(mantissa);
    if alt && precision == 0 {
        out.push('.');
    }
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::super::NoStrings;
    use super::*;

    fn f(format_str: &str, words: &[u32]) -> Result<String, Undecodable> {
        let mut out = String::new();
        let mut args = Args::new(words);
        format(format_str.as_bytes(), &mut args, &mut NoStrings, &mut out)?;
        Ok(out)
    }

    fn wide(v: u64) -> [u32; 2] {
        [(v >> 32) as u32, v as u32]
    }

    #[test]
    fn integers_as_c_prints_them() {
        assert_eq!(
            f("%d|%5d|%-5d|%05d", &[-3i32 as u32, 42, 42, 42]).unwrap(),
            "-3|   42|42   |00042"
        );
        assert_eq!(f("%+d % d %.3d", &[5, 5, 5]).unwrap(), "+5  5 005");
        assert_eq!(
            f("%u %x %X %#x %#o %o", &[u32::MAX, 255, 255, 255, 8, 0]).unwrap(),
            "4294967295 ff FF 0xff 010 0"
        );
        assert_eq!(
            f("%hd %hhu %hx", &[0x1_ffff, 0x1ff, 0xabcd_1234]).unwrap(),
            "-1 255 1234"
        );
        let big = wide(0x1234_5678_9abc_def0);
        assert_eq!(f("%llx", &big).unwrap(), "123456789abcdef0");
        assert_eq!(f("%lld", &wide(-2i64 as u64)).unwrap(), "-2");
        assert_eq!(
            f("%ld %zu %p %c%%", &[7, 8, 0x1000, u32::from(b'A')]).unwrap(),
            "7 8 0x1000 A%"
        );
        assert_eq!(
            f("%*d|%-*d|%.*d", &[4, 1, 3, 2, 2, 3]).unwrap(),
            "   1|2  |03"
        );
        assert_eq!(f("%.0d|", &[0]).unwrap(), "|");
    }

    #[test]
    fn floats_take_two_words_most_significant_first() {
        let pi = wide(core::f64::consts::PI.to_bits());
        assert_eq!(f("%f", &pi).unwrap(), "3.141593");
        assert_eq!(
            f("%.2f|%8.3f|%-8.1f|", &[pi, pi, pi].concat()).unwrap(),
            "3.14|   3.142|3.1     |"
        );
        assert_eq!(
            f("%e", &wide(12345.678f64.to_bits())).unwrap(),
            "1.234568e+04"
        );
        assert_eq!(
            f("%E", &wide(0.00012f64.to_bits())).unwrap(),
            "1.200000E-04"
        );
        assert_eq!(
            f(
                "%g %g %g",
                &[
                    wide(100000.0f64.to_bits()),
                    wide(1e6f64.to_bits()),
                    wide(0.0001f64.to_bits())
                ]
                .concat()
            )
            .unwrap(),
            "100000 1e+06 0.0001"
        );
        assert_eq!(
            f(
                "%g %G",
                &[wide(0.5f64.to_bits()), wide(1e-5f64.to_bits())].concat()
            )
            .unwrap(),
            "0.5 1E-05"
        );
        assert_eq!(
            f(
                "%+.1f %f",
                &[wide(2.25f64.to_bits()), wide((-0.5f64).to_bits())].concat()
            )
            .unwrap(),
            "+2.2 -0.500000"
        );
        assert_eq!(
            f(
                "%f %F",
                &[wide(f64::INFINITY.to_bits()), wide(f64::NAN.to_bits())].concat()
            )
            .unwrap(),
            "inf NAN"
        );
        assert_eq!(
            f(
                "%lf %Lf",
                &[wide(1.5f64.to_bits()), wide(2.5f64.to_bits())].concat()
            )
            .unwrap(),
            "1.500000 2.500000"
        );
    }

    #[test]
    fn missing_arguments_and_bad_conversions_are_reasons() {
        assert_eq!(
            f("%d %d", &[1]),
            Err(Undecodable::ArgumentCount {
                expected: 2,
                received: 1
            })
        );
        assert_eq!(
            f("%f", &[1]),
            Err(Undecodable::ArgumentCount {
                expected: 2,
                received: 1
            })
        );
        assert_eq!(
            f("%n", &[1]),
            Err(Undecodable::UnsupportedConversion { conversion: 'n' })
        );
        assert_eq!(
            f("%a", &[1, 2]),
            Err(Undecodable::UnsupportedConversion { conversion: 'a' })
        );
        assert_eq!(
            f("100%", &[]),
            Err(Undecodable::UnsupportedConversion { conversion: '%' })
        );
        assert!(matches!(f("%s", &[0x1000]), Err(Undecodable::NoImage)));
    }

    #[test]
    fn huge_widths_are_clamped_and_bytes_escaped() {
        let out = f("%99999999999d", &[1]).unwrap();
        assert_eq!(out.len(), MAX_FIELD);
        assert_eq!(f("a\u{1}b", &[]).unwrap(), "a\\x01b");
    }
}
