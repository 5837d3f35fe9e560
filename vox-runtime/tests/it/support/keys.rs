//! API keys for tests, generated: shared by the runtime's redaction unit
//! tests (`src/redact.rs` includes this file) and the integration tests.

/// Generated keys: `len` characters of the alphabets API keys use, some
/// with base64's `+/` and `=` padding (which percent-encoding changes).
pub fn key(len: usize, seed: u64) -> String {
    const PLAIN: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let alphabet = if seed.is_multiple_of(3) {
        BASE64
    } else {
        PLAIN
    };
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut key = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            alphabet[(state % alphabet.len() as u64) as usize] as char
        })
        .collect::<String>();
    // base64 pads with `=` at the end only.
    if alphabet == BASE64 && len > 2 && seed.is_multiple_of(2) {
        key.replace_range(len - 1.., "=");
    }
    key
}
