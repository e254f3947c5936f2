//! Arm's counter equations: a small, total parser and an evaluator that cannot wrap.
//!
//! The grammar is what the database uses, nothing more:
//!
//! ```text
//! expr    = term    { ("+" | "-") term }
//! term    = primary { ("*" | "/") primary }
//! primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
//! ```
//!
//! Numbers are decimal (`100`, `0.125`); names are counter machine names (`MaliGPUActiveCy`) or device
//! constants (`MALI_CONFIG_SHADER_CORE_COUNT`); the functions are `max` and `min`. Every input either parses
//! or gives an [`EquationError`] with the byte offset, and nesting is bounded, so no input can exhaust the
//! stack.
//!
//! Evaluation is in `f64`, as Arm's library evaluates: nothing is clamped. A difference of counts can come out
//! negative (an equation such as `MaliFragRastQd - MaliFragEZSKillQd - MaliFragShadedQd`), where unsigned
//! arithmetic would wrap to about 1.8e19 (libGPUCounters#93); the negative value is kept, because on working
//! hardware it cannot happen and so tells of a hardware erratum, a wrapped counter or a reader bug, which a 0
//! would hide (the engine marks such values implausible). A division by zero is an error naming the divisor,
//! not an infinity.

use std::fmt;

/// The deepest nesting of parentheses and calls an equation may have.
pub const MAX_DEPTH: usize = 32;

/// A parsed equation; names are resolved by the caller to inputs numbered from 0.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number.
    Number(f64),
    /// Input `n` of the caller's resolution (a counter or a device constant).
    Input(usize),
    /// `a + b`.
    Add(Box<Expr>, Box<Expr>),
    /// `a - b`.
    Sub(Box<Expr>, Box<Expr>),
    /// `a * b`.
    Mul(Box<Expr>, Box<Expr>),
    /// `a / b`.
    Div(Box<Expr>, Box<Expr>),
    /// The largest argument.
    Max(Vec<Expr>),
    /// The smallest argument.
    Min(Vec<Expr>),
}

/// Why an equation did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EquationError {
    /// A character no token starts with.
    #[error("unexpected character {found:?} at byte {at}")]
    BadCharacter {
        /// Byte offset.
        at: usize,
        /// The character.
        found: char,
    },
    /// A token where another was needed (or the end of the text).
    #[error("expected {expected} at byte {at}")]
    Expected {
        /// Byte offset.
        at: usize,
        /// What the grammar needed.
        expected: &'static str,
    },
    /// A number that is not a finite decimal.
    #[error("bad number at byte {at}")]
    BadNumber {
        /// Byte offset.
        at: usize,
    },
    /// A call of a function other than `max` and `min`.
    #[error("unknown function {name:?} at byte {at}")]
    UnknownFunction {
        /// Byte offset.
        at: usize,
        /// The name called.
        name: String,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("nested deeper than {MAX_DEPTH} at byte {at}")]
    TooDeep {
        /// Byte offset.
        at: usize,
    },
}

/// Why an equation has no value for one sample or window.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A divisor was zero (for example a rate over a window in which the unit never ran).
    #[error("{divisor} is 0")]
    DivisionByZero {
        /// The divisor, with its inputs numbered (`$3`); [`Expr::render`] names them.
        divisor: Box<Expr>,
    },
}

/// Parses `text`, resolving each name with `resolve` to an input number; a name it refuses (`Err`) ends
/// the parse with the caller's error.
pub fn parse<E>(
    text: &str,
    mut resolve: impl FnMut(&str) -> Result<usize, E>,
) -> Result<Result<Expr, E>, EquationError> {
    let mut parser = Parser {
        text,
        at: 0,
        resolve: &mut resolve,
        refused: None,
    };
    let expr = parser.expr(0)?;
    parser.skip_space();
    if let Some(found) = text[parser.at..].chars().next() {
        if !(found.is_ascii_alphanumeric() || "_+-*/(),.".contains(found)) {
            return Err(EquationError::BadCharacter {
                at: parser.at,
                found,
            });
        }
        return Err(EquationError::Expected {
            at: parser.at,
            expected: "an operator or the end",
        });
    }
    Ok(match parser.refused.take() {
        Some(err) => Err(err),
        None => Ok(expr),
    })
}

/// The parser's state: the text and the offset of the next unread byte.
struct Parser<'t, 'r, E> {
    /// The equation.
    text: &'t str,
    /// Offset of the next unread byte.
    at: usize,
    /// Resolves a name to an input number.
    resolve: &'r mut dyn FnMut(&str) -> Result<usize, E>,
    /// The first name `resolve` refused; parsing goes on so syntax errors still surface.
    refused: Option<E>,
}

impl<E> Parser<'_, '_, E> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    /// The next byte after spaces, without taking it.
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.as_bytes().get(self.at).copied()
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), EquationError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(EquationError::Expected {
                at: self.at,
                expected,
            })
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, EquationError> {
        let mut left = self.term(depth)?;
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.at += 1;
                    left = Expr::Add(Box::new(left), Box::new(self.term(depth)?));
                }
                Some(b'-') => {
                    self.at += 1;
                    left = Expr::Sub(Box::new(left), Box::new(self.term(depth)?));
                }
                _ => return Ok(left),
            }
        }
    }

    fn term(&mut self, depth: usize) -> Result<Expr, EquationError> {
        let mut left = self.primary(depth)?;
        loop {
            match self.peek() {
                Some(b'*') => {
                    self.at += 1;
                    left = Expr::Mul(Box::new(left), Box::new(self.primary(depth)?));
                }
                Some(b'/') => {
                    self.at += 1;
                    left = Expr::Div(Box::new(left), Box::new(self.primary(depth)?));
                }
                _ => return Ok(left),
            }
        }
    }

    fn primary(&mut self, depth: usize) -> Result<Expr, EquationError> {
        let start = self.at;
        if depth >= MAX_DEPTH {
            return Err(EquationError::TooDeep { at: start });
        }
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let inner = self.expr(depth + 1)?;
                self.expect(b')', "')'")?;
                Ok(inner)
            }
            Some(b'0'..=b'9') => self.number(),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => self.name(depth),
            Some(_) => {
                let found = self.text[self.at..].chars().next().unwrap_or('\0');
                if matches!(found, '+' | '-' | '*' | '/' | ')' | ',') {
                    Err(EquationError::Expected {
                        at: self.at,
                        expected: "a number, a name or '('",
                    })
                } else {
                    Err(EquationError::BadCharacter { at: self.at, found })
                }
            }
            None => Err(EquationError::Expected {
                at: self.at,
                expected: "a number, a name or '('",
            }),
        }
    }

    fn number(&mut self) -> Result<Expr, EquationError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && (bytes[self.at].is_ascii_digit() || bytes[self.at] == b'.') {
            self.at += 1;
        }
        match self.text[start..self.at].parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Expr::Number(value)),
            _ => Err(EquationError::BadNumber { at: start }),
        }
    }

    fn name(&mut self, depth: usize) -> Result<Expr, EquationError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        while self.at < bytes.len()
            && (bytes[self.at].is_ascii_alphanumeric() || bytes[self.at] == b'_')
        {
            self.at += 1;
        }
        let name = &self.text[start..self.at];
        if self.peek() == Some(b'(') {
            self.at += 1;
            let mut args = vec![self.expr(depth + 1)?];
            while self.peek() == Some(b',') {
                self.at += 1;
                args.push(self.expr(depth + 1)?);
            }
            self.expect(b')', "',' or ')'")?;
            return match name {
                "max" => Ok(Expr::Max(args)),
                "min" => Ok(Expr::Min(args)),
                _ => Err(EquationError::UnknownFunction {
                    at: start,
                    name: name.to_owned(),
                }),
            };
        }
        match (self.resolve)(name) {
            Ok(input) => Ok(Expr::Input(input)),
            Err(err) => {
                self.refused.get_or_insert(err);
                Ok(Expr::Number(0.0))
            }
        }
    }
}

impl Expr {
    /// The value, with input `n` taken from `inputs[n]` (an input beyond the slice reads as 0).
    pub fn eval(&self, inputs: &[f64]) -> Result<f64, EvalError> {
        Ok(match self {
            Expr::Number(v) => *v,
            Expr::Input(n) => inputs.get(*n).copied().unwrap_or(0.0),
            Expr::Add(a, b) => a.eval(inputs)? + b.eval(inputs)?,
            Expr::Sub(a, b) => a.eval(inputs)? - b.eval(inputs)?,
            Expr::Mul(a, b) => a.eval(inputs)? * b.eval(inputs)?,
            Expr::Div(a, b) => {
                let divisor = b.eval(inputs)?;
                if divisor == 0.0 {
                    return Err(EvalError::DivisionByZero { divisor: b.clone() });
                }
                a.eval(inputs)? / divisor
            }
            Expr::Max(args) => fold(args, inputs, f64::max)?,
            Expr::Min(args) => fold(args, inputs, f64::min)?,
        })
    }

    /// The expression as text with each input called by `name` (`MaliFragRastQd - MaliFragEZSKillQd`),
    /// parenthesised only where the order of operations needs it.
    pub fn render(&self, name: &dyn Fn(usize) -> String) -> String {
        self.render_in(name, 0)
    }

    /// `render` inside an operator of precedence `outer` (0: none, 1: `+ -`, 2: `* /`).
    fn render_in(&self, name: &dyn Fn(usize) -> String, outer: u8) -> String {
        let (text, own) = match self {
            Expr::Number(v) => (format!("{v}"), 3),
            Expr::Input(n) => (name(*n), 3),
            Expr::Add(a, b) => (
                format!("{} + {}", a.render_in(name, 1), b.render_in(name, 2)),
                1,
            ),
            Expr::Sub(a, b) => (
                format!("{} - {}", a.render_in(name, 1), b.render_in(name, 2)),
                1,
            ),
            Expr::Mul(a, b) => (
                format!("{} * {}", a.render_in(name, 2), b.render_in(name, 3)),
                2,
            ),
            Expr::Div(a, b) => (
                format!("{} / {}", a.render_in(name, 2), b.render_in(name, 3)),
                2,
            ),
            Expr::Max(args) | Expr::Min(args) => {
                let f = if matches!(self, Expr::Max(_)) {
                    "max"
                } else {
                    "min"
                };
                let args: Vec<String> = args.iter().map(|a| a.render_in(name, 0)).collect();
                (format!("{f}({})", args.join(", ")), 3)
            }
        };
        if own < outer {
            format!("({text})")
        } else {
            text
        }
    }

    /// The same expression with each input `n` renumbered `map(n)`.
    pub fn map_inputs(&self, map: &dyn Fn(usize) -> usize) -> Expr {
        let boxed = |e: &Expr| Box::new(e.map_inputs(map));
        match self {
            Expr::Number(v) => Expr::Number(*v),
            Expr::Input(n) => Expr::Input(map(*n)),
            Expr::Add(a, b) => Expr::Add(boxed(a), boxed(b)),
            Expr::Sub(a, b) => Expr::Sub(boxed(a), boxed(b)),
            Expr::Mul(a, b) => Expr::Mul(boxed(a), boxed(b)),
            Expr::Div(a, b) => Expr::Div(boxed(a), boxed(b)),
            Expr::Max(args) => Expr::Max(args.iter().map(|a| a.map_inputs(map)).collect()),
            Expr::Min(args) => Expr::Min(args.iter().map(|a| a.map_inputs(map)).collect()),
        }
    }

    /// Every input the expression reads, in order of appearance (with repeats).
    pub fn inputs(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_inputs(&mut out);
        out
    }

    fn collect_inputs(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Number(_) => {}
            Expr::Input(n) => out.push(*n),
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Div(a, b) => {
                a.collect_inputs(out);
                b.collect_inputs(out);
            }
            Expr::Max(args) | Expr::Min(args) => args.iter().for_each(|a| a.collect_inputs(out)),
        }
    }
}

/// Folds the values of `args` (never empty: the parser makes at least one) with `f`.
fn fold(args: &[Expr], inputs: &[f64], f: fn(f64, f64) -> f64) -> Result<f64, EvalError> {
    let mut values = args.iter().map(|a| a.eval(inputs));
    let first = values.next().unwrap_or(Ok(0.0))?;
    values.try_fold(first, |acc, v| Ok(f(acc, v?)))
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number(v) => write!(f, "{v}"),
            Expr::Input(n) => write!(f, "${n}"),
            Expr::Add(a, b) => write!(f, "({a} + {b})"),
            Expr::Sub(a, b) => write!(f, "({a} - {b})"),
            Expr::Mul(a, b) => write!(f, "({a} * {b})"),
            Expr::Div(a, b) => write!(f, "({a} / {b})"),
            Expr::Max(args) | Expr::Min(args) => {
                f.write_str(if matches!(self, Expr::Max(_)) {
                    "max("
                } else {
                    "min("
                })?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses with names `a`, `b`, `c`, … as inputs 0, 1, 2, …; any other name is refused.
    fn p(text: &str) -> Result<Expr, EquationError> {
        parse(text, |name| match name.as_bytes() {
            [c @ b'a'..=b'z'] => Ok(usize::from(c - b'a')),
            _ => Err(name.to_owned()),
        })
        .map(|r| r.expect("names resolve"))
    }

    fn eval(text: &str, inputs: &[f64]) -> Result<f64, EvalError> {
        p(text).unwrap().eval(inputs)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(eval("a + b * c", &[1.0, 2.0, 3.0]), Ok(7.0));
        assert_eq!(eval("(a + b) * c", &[1.0, 2.0, 3.0]), Ok(9.0));
        assert_eq!(eval("a / b / c", &[12.0, 2.0, 3.0]), Ok(2.0));
        assert_eq!(eval("a - b - c", &[10.0, 2.0, 3.0]), Ok(5.0));
        assert_eq!(eval("(a / b) * 100", &[1.0, 4.0]), Ok(25.0));
        assert_eq!(eval("0.125 * a", &[8.0]), Ok(1.0));
    }

    #[test]
    fn functions() {
        assert_eq!(eval("max(a, b, c * 4)", &[1.0, 2.0, 3.0]), Ok(12.0));
        assert_eq!(eval("min(a, b + c)", &[9.0, 2.0, 3.0]), Ok(5.0));
        assert_eq!(eval("max(a)", &[7.0]), Ok(7.0));
        assert_eq!(
            eval("b + c + ((a - min(a, b + c)) / 2)", &[10.0, 2.0, 3.0]),
            Ok(7.5)
        );
    }

    #[test]
    fn a_difference_of_counts_goes_negative_instead_of_wrapping_or_clamping() {
        // libGPUCounters#93: rasterized quads less the killed and shaded ones, sampled a little apart,
        // came out as 13905622581249048576 there (a u64 wrapped below zero). Here it is the negative number
        // Arm's equation gives, which the engine marks implausible rather than hiding as 0.
        let fpk_kill = eval("a - b - c", &[1000.0, 400.0, 700.0]).unwrap();
        assert_eq!(fpk_kill, -100.0);
        assert_eq!(
            eval("(a - b - c) / a * 100", &[1000.0, 400.0, 700.0]),
            Ok(-10.0)
        );
    }

    #[test]
    fn division_by_zero_is_an_error_naming_the_divisor() {
        let names = |n: usize| ["a", "b", "c"][n].to_owned();
        let Err(EvalError::DivisionByZero { divisor }) = eval("a / (b - c)", &[1.0, 2.0, 2.0])
        else {
            panic!("no error");
        };
        assert_eq!(divisor.render(&names), "b - c");
        let Err(err) = eval("max(a, b / c)", &[1.0, 1.0, 0.0]) else {
            panic!("no error");
        };
        let EvalError::DivisionByZero { divisor } = &err;
        assert_eq!(divisor.render(&names), "c");
        assert_eq!(err.to_string(), "$2 is 0");
    }

    #[test]
    fn inputs_are_renumbered() {
        let expr = p("a / (b - a)").unwrap();
        let moved = expr.map_inputs(&|n| n + 10);
        assert_eq!(moved.inputs(), [10, 11, 10]);
        assert_eq!(
            moved.eval(
                &[0.0; 10]
                    .iter()
                    .chain(&[6.0, 9.0])
                    .copied()
                    .collect::<Vec<_>>()
            ),
            Ok(2.0)
        );
    }

    #[test]
    fn rendering_keeps_the_order_of_operations() {
        let names = |n: usize| ["a", "b", "c", "d"][n].to_owned();
        for text in [
            "a - (b - c)",
            "(a + b) * c",
            "a / (b * c)",
            "a - b - c",
            "max(a, b / c) * 100",
            "a * b / c",
        ] {
            let expr = p(text).unwrap();
            let rendered = expr.render(&names);
            assert_eq!(rendered, text);
            assert_eq!(p(&rendered).unwrap(), expr);
        }
    }

    #[test]
    fn every_malformed_equation_is_a_typed_error() {
        let cases: &[(&str, EquationError)] = &[
            (
                "",
                EquationError::Expected {
                    at: 0,
                    expected: "a number, a name or '('",
                },
            ),
            (
                "a +",
                EquationError::Expected {
                    at: 3,
                    expected: "a number, a name or '('",
                },
            ),
            (
                "(a",
                EquationError::Expected {
                    at: 2,
                    expected: "')'",
                },
            ),
            (
                "a b",
                EquationError::Expected {
                    at: 2,
                    expected: "an operator or the end",
                },
            ),
            ("a % b", EquationError::BadCharacter { at: 2, found: '%' }),
            ("a + é", EquationError::BadCharacter { at: 4, found: 'é' }),
            ("1.2.3", EquationError::BadNumber { at: 0 }),
            (
                "sqrt(a)",
                EquationError::UnknownFunction {
                    at: 0,
                    name: "sqrt".into(),
                },
            ),
            (
                "max()",
                EquationError::Expected {
                    at: 4,
                    expected: "a number, a name or '('",
                },
            ),
            (
                "max(a b)",
                EquationError::Expected {
                    at: 6,
                    expected: "',' or ')'",
                },
            ),
            (
                "-a",
                EquationError::Expected {
                    at: 0,
                    expected: "a number, a name or '('",
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(p(text).as_ref(), Err(want), "{text:?}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(p(&deep), Err(EquationError::TooDeep { .. })));
        let calls = format!("{}a{}", "max(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(p(&calls), Err(EquationError::TooDeep { .. })));
        let ok = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH - 1),
            ")".repeat(MAX_DEPTH - 1)
        );
        assert_eq!(p(&ok), Ok(Expr::Input(0)));
    }

    #[test]
    fn a_refused_name_is_the_callers_error() {
        let out = parse("a + Unknown * 2", |name| match name {
            "a" => Ok(0),
            other => Err(other.to_owned()),
        });
        assert_eq!(out, Ok(Err("Unknown".to_owned())));
        // A syntax error still wins over a refused name.
        let out = parse("Unknown +", |name| Err::<usize, _>(name.to_owned()));
        assert!(out.is_err());
    }

    #[test]
    fn inputs_are_listed() {
        assert_eq!(p("a + max(b, c * a)").unwrap().inputs(), [0, 1, 2, 0]);
    }
}
