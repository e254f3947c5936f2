//! "Did you mean …?" for counter names.

/// The hint printed after an unknown counter name.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let matches = lizard_core::counter_names::closest(name, candidates);
    if matches.is_empty() {
        " (see `lizard list` for the names)".to_owned()
    } else {
        format!(
            ", did you mean {}?",
            matches
                .iter()
                .map(|m| format!("'{m}'"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
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
