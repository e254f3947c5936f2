//! [`EventSpec`]: how a user names an Arm PMU event — by Arm's mnemonic (`L2D_CACHE_REFILL`), by the
//! kernel's sysfs name (`l2d_cache_refill`), by number (`0x4005`, perf's `r4005`), each optionally
//! restricted to one PMU in perf's spelling (`armv8_cortex_a76/l2d_cache_refill/`,
//! `armv8_pmuv3/event=0x08/`). Parsing checks only the spelling; which PMU has the event is
//! [`CpuPmus::resolve`](super::CpuPmus::resolve)'s question.

use core::fmt;
use core::str::FromStr;

/// The event part of an [`EventSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventName {
    /// A name: Arm's mnemonic or the kernel's sysfs name (compared ignoring ASCII case).
    Name(String),
    /// An event number, as programmed into `PMEVTYPER<n>_EL0.evtCount`.
    Number(u16),
}

/// An Arm PMU event as a user names it.
///
/// ```
/// use hwcpipe::cpu::{EventName, EventSpec};
/// let spec: EventSpec = "r4005".parse().unwrap();
/// assert_eq!(spec.event, EventName::Number(0x4005));
/// let spec: EventSpec = "armv8_cortex_a76/l2d_cache_refill/".parse().unwrap();
/// assert_eq!(spec.pmu.as_deref(), Some("armv8_cortex_a76"));
/// assert_eq!(spec.event, EventName::Name("l2d_cache_refill".into()));
/// assert!("0x10000".parse::<EventSpec>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventSpec {
    /// The PMU it is restricted to (perf's `PMU/EVENT/`), by the kernel's name for the PMU.
    pub pmu: Option<String>,
    /// The event.
    pub event: EventName,
}

/// Why a text is not an event name or number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventSpecError {
    /// Nothing was given.
    #[error("an empty event name")]
    Empty,
    /// A number (`0x…`, `r…`) whose digits are not hexadecimal.
    #[error("'{text}' is not a hexadecimal event number (0x4005 or r4005)")]
    BadNumber {
        /// The text.
        text: String,
    },
    /// A number beyond the 16 bits of `evtCount`.
    #[error(
        "event number {text} does not fit the 16 bits of an Arm PMU event number (at most 0xffff)"
    )]
    NumberTooLarge {
        /// The text.
        text: String,
    },
    /// A character no event or PMU name has.
    #[error("'{text}' is not an event name: {found:?} is not a letter, digit or '_'")]
    BadCharacter {
        /// The text.
        text: String,
        /// The first character that is not allowed.
        found: char,
    },
    /// `PMU/EVENT/` with a part missing, or with terms other than one event.
    #[error(
        "'{text}' is not PMU/EVENT/ (such as armv8_pmuv3/inst_retired/ or armv8_pmuv3/event=0x08/)"
    )]
    BadPmuForm {
        /// The text.
        text: String,
    },
}

/// The longest name accepted (Arm's longest mnemonics are about 40 characters).
const MAX_NAME: usize = 128;

impl FromStr for EventSpec {
    type Err = EventSpecError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.is_empty() {
            return Err(EventSpecError::Empty);
        }
        let Some((pmu, rest)) = text.split_once('/') else {
            return Ok(EventSpec {
                pmu: None,
                event: event_name(text, text)?,
            });
        };
        let bad_form = || EventSpecError::BadPmuForm {
            text: text.to_owned(),
        };
        let inner = rest.strip_suffix('/').unwrap_or(rest);
        if pmu.is_empty() || inner.is_empty() || inner.contains('/') || inner.contains(',') {
            return Err(bad_form());
        }
        check_word(pmu, text)?;
        let event = match inner.split_once('=') {
            Some(("event", value)) => match event_name(value, text)? {
                number @ EventName::Number(_) => number,
                EventName::Name(_) => return Err(bad_form()),
            },
            Some(_) => return Err(bad_form()),
            None => event_name(inner, text)?,
        };
        Ok(EventSpec {
            pmu: Some(pmu.to_owned()),
            event,
        })
    }
}

/// `word` (part of `text`) as a number (`0x…`, `r…`) or a name.
fn event_name(word: &str, text: &str) -> Result<EventName, EventSpecError> {
    let hex = word
        .strip_prefix("0x")
        .or_else(|| word.strip_prefix("0X"))
        .or_else(|| {
            // perf's raw spelling: `r` and hexadecimal digits only (a name such as `remote_access`
            // is not one).
            let digits = word.strip_prefix('r').or_else(|| word.strip_prefix('R'))?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit())).then_some(digits)
        });
    if let Some(digits) = hex {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(EventSpecError::BadNumber {
                text: text.to_owned(),
            });
        }
        let significant = digits.trim_start_matches('0');
        if significant.len() > 4 {
            return Err(EventSpecError::NumberTooLarge {
                text: text.to_owned(),
            });
        }
        let value = u16::from_str_radix(
            if significant.is_empty() {
                "0"
            } else {
                significant
            },
            16,
        )
        .map_err(|_| EventSpecError::NumberTooLarge {
            text: text.to_owned(),
        })?;
        return Ok(EventName::Number(value));
    }
    check_word(word, text)?;
    Ok(EventName::Name(word.to_owned()))
}

/// Checks that `word` is letters, digits and `_` only, and not too long.
fn check_word(word: &str, text: &str) -> Result<(), EventSpecError> {
    if let Some(found) = word
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(EventSpecError::BadCharacter {
            text: text.to_owned(),
            found,
        });
    }
    if word.len() > MAX_NAME {
        return Err(EventSpecError::BadPmuForm {
            text: text.chars().take(MAX_NAME).collect(),
        });
    }
    Ok(())
}

impl fmt::Display for EventSpec {
    /// perf's spelling: `NAME`, `0xNNNN`, or `PMU/NAME/`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let event = match &self.event {
            EventName::Name(name) => name.clone(),
            EventName::Number(n) => format!("{n:#06x}"),
        };
        match &self.pmu {
            Some(pmu) => write!(f, "{pmu}/{event}/"),
            None => f.write_str(&event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(text: &str) -> EventSpec {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn names_numbers_and_pmu_forms() {
        assert_eq!(
            spec(" L2D_CACHE_REFILL "),
            EventSpec {
                pmu: None,
                event: EventName::Name("L2D_CACHE_REFILL".into())
            }
        );
        assert_eq!(spec("0x4005").event, EventName::Number(0x4005));
        assert_eq!(spec("0X08").event, EventName::Number(8));
        assert_eq!(spec("r11").event, EventName::Number(0x11));
        assert_eq!(spec("R0").event, EventName::Number(0));
        assert_eq!(spec("0x00004005").event, EventName::Number(0x4005));
        // `r` followed by something that is not hexadecimal is a name.
        assert_eq!(
            spec("remote_access").event,
            EventName::Name("remote_access".into())
        );
        let pmu = spec("armv8_pmuv3/event=0x11/");
        assert_eq!(pmu.pmu.as_deref(), Some("armv8_pmuv3"));
        assert_eq!(pmu.event, EventName::Number(0x11));
        assert_eq!(
            spec("armv8_pmuv3/inst_retired").pmu.as_deref(),
            Some("armv8_pmuv3")
        );
        assert_eq!(spec("armv8_pmuv3/r8/").to_string(), "armv8_pmuv3/0x0008/");
    }

    #[test]
    fn every_malformed_spelling_is_a_typed_error() {
        type Check = fn(&EventSpecError) -> bool;
        let cases: [(&str, Check); 12] = [
            ("", |e| matches!(e, EventSpecError::Empty)),
            ("  ", |e| matches!(e, EventSpecError::Empty)),
            ("0x", |e| matches!(e, EventSpecError::BadNumber { .. })),
            ("0xfg", |e| matches!(e, EventSpecError::BadNumber { .. })),
            ("0x10000", |e| {
                matches!(e, EventSpecError::NumberTooLarge { .. })
            }),
            ("r123456", |e| {
                matches!(e, EventSpecError::NumberTooLarge { .. })
            }),
            ("L2D-CACHE", |e| {
                matches!(e, EventSpecError::BadCharacter { found: '-', .. })
            }),
            ("/inst_retired/", |e| {
                matches!(e, EventSpecError::BadPmuForm { .. })
            }),
            ("armv8_pmuv3//", |e| {
                matches!(e, EventSpecError::BadPmuForm { .. })
            }),
            ("armv8_pmuv3/a/b/", |e| {
                matches!(e, EventSpecError::BadPmuForm { .. })
            }),
            ("armv8_pmuv3/event=cycles/", |e| {
                matches!(e, EventSpecError::BadPmuForm { .. })
            }),
            ("armv8_pmuv3/config=0x11/", |e| {
                matches!(e, EventSpecError::BadPmuForm { .. })
            }),
        ];
        for (text, check) in cases {
            let err = text.parse::<EventSpec>().unwrap_err();
            assert!(check(&err), "{text:?}: {err:?}");
            assert!(!err.to_string().is_empty());
        }
        let long = "A".repeat(MAX_NAME + 1);
        assert!(long.parse::<EventSpec>().is_err());
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panicking(text in ".{0,40}") {
            let _ = text.parse::<EventSpec>();
        }

        #[test]
        fn every_number_round_trips(n in any::<u16>()) {
            prop_assert_eq!(spec(&format!("{n:#x}")).event, EventName::Number(n));
            prop_assert_eq!(spec(&format!("r{n:x}")).event, EventName::Number(n));
        }
    }
}
