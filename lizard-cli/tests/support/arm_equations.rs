//! Arm's Mali counter database read straight from its XML (`../shared/data/libgpucounters-spec`), and its
//! equations evaluated by a small evaluator of this test's own: the independent judge of the engine's window
//! values, sharing no code with `hwcpipe-rs`' parser.
#![allow(dead_code)]

use std::collections::HashMap;

/// Counter machine name → its equation (`None` for a hardware counter), for one GPU.
pub struct Database {
    pub equations: HashMap<String, Option<String>>,
}

impl Database {
    /// The counters of `gpu` (`Mali-G78`), or `None` where the data folder is missing (said on stderr).
    pub fn for_gpu(gpu: &str) -> Option<Database> {
        let dir = test_data::path("libgpucounters-spec/database/counterinfo")?;
        let mut equations = HashMap::new();
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("counter info");
            let doc = roxmltree::Document::parse(&text).expect("counter info XML");
            for info in doc.descendants().filter(|n| n.has_tag_name("CounterInfo")) {
                let child = |tag: &str| {
                    info.children()
                        .find(|n| n.has_tag_name(tag))
                        .and_then(|n| n.text())
                        .map(|t| t.trim().to_owned())
                };
                let supported = info
                    .descendants()
                    .filter(|n| n.has_tag_name("GPU"))
                    .any(|n| n.text().map(str::trim) == Some(gpu));
                if let (true, Some(name)) = (supported, child("MachineName")) {
                    equations.insert(name, child("Equation"));
                }
            }
        }
        Some(Database { equations })
    }
}

/// Why an equation has no value.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A divisor evaluated to 0.
    DivisionByZero,
    /// A name the caller could not give a value.
    Missing(String),
}

/// Evaluates `text` with `value` giving each name's value.
pub fn evaluate(
    text: &str,
    value: &mut dyn FnMut(&str) -> Result<f64, Failure>,
) -> Result<f64, Failure> {
    let tokens = tokenize(text);
    let mut at = 0;
    let v = sum(&tokens, &mut at, value)?;
    assert_eq!(at, tokens.len(), "trailing tokens in {text}");
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Op(char),
}

fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Token::Number(text.parse().expect("number")));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else {
            out.push(Token::Op(c));
            i += 1;
        }
    }
    out
}

type Value<'a> = &'a mut dyn FnMut(&str) -> Result<f64, Failure>;

fn sum(t: &[Token], at: &mut usize, value: Value<'_>) -> Result<f64, Failure> {
    let mut v = product(t, at, value)?;
    while let Some(Token::Op(op @ ('+' | '-'))) = t.get(*at) {
        *at += 1;
        let rhs = product(t, at, value)?;
        v = if *op == '+' { v + rhs } else { v - rhs };
    }
    Ok(v)
}

fn product(t: &[Token], at: &mut usize, value: Value<'_>) -> Result<f64, Failure> {
    let mut v = atom(t, at, value)?;
    while let Some(Token::Op(op @ ('*' | '/'))) = t.get(*at) {
        *at += 1;
        let rhs = atom(t, at, value)?;
        if *op == '*' {
            v *= rhs;
        } else if rhs == 0.0 {
            return Err(Failure::DivisionByZero);
        } else {
            v /= rhs;
        }
    }
    Ok(v)
}

fn atom(t: &[Token], at: &mut usize, value: Value<'_>) -> Result<f64, Failure> {
    let token = t.get(*at).cloned().expect("an operand");
    *at += 1;
    match token {
        Token::Number(v) => Ok(v),
        Token::Op('(') => {
            let v = sum(t, at, value)?;
            assert_eq!(t.get(*at), Some(&Token::Op(')')));
            *at += 1;
            Ok(v)
        }
        Token::Op('-') => Ok(-atom(t, at, value)?),
        Token::Name(name) if t.get(*at) == Some(&Token::Op('(')) => {
            *at += 1;
            let mut args = vec![sum(t, at, value)?];
            while t.get(*at) == Some(&Token::Op(',')) {
                *at += 1;
                args.push(sum(t, at, value)?);
            }
            assert_eq!(t.get(*at), Some(&Token::Op(')')));
            *at += 1;
            let fold = match name.as_str() {
                "max" => f64::max,
                "min" => f64::min,
                other => panic!("unknown function {other}"),
            };
            Ok(args.into_iter().reduce(fold).expect("an argument"))
        }
        Token::Name(name) => value(&name),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn the_evaluator_follows_the_order_of_operations() {
    let mut names = |n: &str| match n {
        "a" => Ok(6.0),
        "b" => Ok(2.0),
        other => Err(Failure::Missing(other.to_owned())),
    };
    assert_eq!(evaluate("a - b - 1", &mut names), Ok(3.0));
    assert_eq!(evaluate("a / b * 3", &mut names), Ok(9.0));
    assert_eq!(
        evaluate("max(a, b * 4) / (a - 3 * b + 1)", &mut names),
        Ok(8.0)
    );
    assert_eq!(
        evaluate("a / (b - 2)", &mut names),
        Err(Failure::DivisionByZero)
    );
}
