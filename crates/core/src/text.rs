//! Text cut to size: the one cut of a string at a character boundary.
//!
//! A leaf: it uses no other module of the crate.

/// Cuts `s` to at most `max` bytes at a character boundary.
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cuts_at_a_character_boundary() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("abc", 2), "ab");
        // "é" is two bytes: a cut inside it keeps the character out.
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("", 0), "");
    }
}
