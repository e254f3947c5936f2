//! "Did you mean …?" for counter names.

/// The edit distance between `a` and `b`, ignoring ASCII case.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            current.push(
                (previous[j] + cost)
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1),
            );
        }
        previous = current;
    }
    previous[b.len()]
}

/// Up to three of `candidates` closest to `name` (containing it, or within a third of its length in
/// edits), closest first.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let d = if candidate.to_ascii_lowercase().contains(&lower) {
                0
            } else {
                distance(name, candidate)
            };
            (d <= limit).then_some((d, candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// The hint printed after an unknown counter name.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let matches = closest(name, candidates);
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
    fn close_names_are_suggested() {
        let names = ["Cycles", "Instructions", "TaskClock", "PageFaults"];
        assert_eq!(closest("cycels", names), vec!["Cycles"]);
        assert_eq!(closest("clock", names), vec!["TaskClock"]);
        assert!(closest("zzzzzz", names).is_empty());
        assert_eq!(hint("Cycle", names), ", did you mean 'Cycles'?");
        assert!(hint("qqqq", names).contains("lizard list"));
    }
}
