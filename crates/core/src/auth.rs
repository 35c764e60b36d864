//! The bridge's secret: 128 bits from the OS CSPRNG, hex encoded, compared in constant time.

use subtle::ConstantTimeEq;

/// The header Claude Code sends its token in.
pub const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// A fresh 128-bit token from the operating system's CSPRNG, as 32 lowercase hex digits.
pub fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares a presented token with the expected one without leaking, through timing, how many
/// leading bytes matched. (The length is not secret: every token we issue has 32 characters.)
pub fn token_matches(expected: &str, presented: &str) -> bool {
    expected.as_bytes().ct_eq(presented.as_bytes()).into()
}

/// A token for logs and `:ClaudeContext status`: the first four characters, the rest masked.
pub fn mask(token: &str) -> String {
    let head: String = token.chars().take(4).collect();
    format!(
        "{head}{}",
        "*".repeat(token.len().saturating_sub(4).min(28))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_128_bit_hex_and_differ() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[test]
    fn comparison_requires_exact_match() {
        let t = new_token().unwrap();
        assert!(token_matches(&t, &t));
        assert!(!token_matches(&t, &t[..31]));
        assert!(!token_matches(&t, ""));
        let mut wrong = t.clone().into_bytes();
        wrong[31] = if wrong[31] == b'0' { b'1' } else { b'0' };
        assert!(!token_matches(&t, std::str::from_utf8(&wrong).unwrap()));
    }

    #[test]
    fn mask_hides_all_but_four() {
        let t = "0123456789abcdef0123456789abcdef";
        let m = mask(t);
        assert!(m.starts_with("0123"));
        assert!(!m.contains("456789"));
    }
}
