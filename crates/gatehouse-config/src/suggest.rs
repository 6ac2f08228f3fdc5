//! "Did you mean": the known key closest to a misspelt one, when one is close enough that the
//! suggestion is more likely right than noise.

/// The candidate closest to `word` (ignoring case; a swapped pair of letters counts as one
/// edit), if it is within a third of `word`'s length (at least one edit, at most three). Ties go
/// to the earlier candidate, so callers list the likelier keys first.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != word)
        .map(|candidate| (distance(word, candidate), candidate))
        .filter(|(edits, _)| *edits <= limit)
        .min_by_key(|(edits, _)| *edits)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and transpositions
/// of adjacent letters, compared case-insensitively.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    // Three rows of the edit-distance table: two rows back (for transpositions), the previous
    // and the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_edits_with_swaps_as_one() {
        assert_eq!(distance("securty", "security"), 1);
        assert_eq!(distance("agnets", "agents"), 1);
        assert_eq!(distance("botToken", "bottoken"), 0);
        assert_eq!(distance("", "ask"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggests_only_close_keys() {
        let keys = ["security", "ask", "askFallback", "safeBins"];
        assert_eq!(closest("securty", keys), Some("security"));
        assert_eq!(closest("asks", keys), Some("ask"));
        assert_eq!(closest("safebins", keys), Some("safeBins"));
        assert_eq!(closest("mode", keys), None);
        assert_eq!(closest("x", keys), None);
        assert_eq!(closest("security", keys), None);
    }
}
