//! "Did you mean …?" for counter names.

/// The hint printed after an unknown counter name: the closest names
/// ([`did_you_mean`](lizard_core::counter_names::did_you_mean)), or where to find them.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match lizard_core::counter_names::did_you_mean(name, candidates, " or ") {
        Some(names) => format!(", {names}"),
        None => " (see `lizard list` for the names)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_names_the_closest_or_the_list() {
        let names = ["Cycles", "Instructions", "TaskClock", "PageFaults"];
        assert_eq!(hint("Cycle", names), ", did you mean 'Cycles'?");
        assert!(hint("qqqq", names).contains("lizard list"));
    }
}
