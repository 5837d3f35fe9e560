//! The Vox `Date` (docs/language.md, "Dates"): an ISO 8601 calendar date,
//! `YYYY-MM-DD`, years 0001 to 9999, kept as its text. The text of a valid
//! date orders and compares as the date does, so generated code compares
//! and sorts it as a `String`; these functions compute with it.

/// Whether `text` is a date as Vox writes one: `YYYY-MM-DD`, a real day of
/// the proleptic Gregorian calendar, year 0001 to 9999.
pub fn is_date(text: &str) -> bool {
    ymd(text).is_some()
}

/// The year, month and day of a valid date's text.
fn ymd(text: &str) -> Option<(i64, i64, i64)> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = &b[r];
        if !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(s.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if y < 1 || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some((y, m, d))
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `z` days from 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn text(y: i64, m: i64, d: i64) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day number of a date's text; a text that is no date (which Vox
/// never makes) stops the program, naming the function and the place.
fn day_number(date: &str, f: &str, at: &str) -> i64 {
    match ymd(date) {
        Some((y, m, d)) => days_from_civil(y, m, d),
        None => panic!("{f} at {at}: {date:?} is not a date"),
    }
}

/// Vox `parse_date(s)`: the date `s` writes as `YYYY-MM-DD` (surrounding
/// spaces allowed), `None` for any other text.
pub fn parse_date(s: &str) -> Option<String> {
    let t = s.trim();
    is_date(t).then(|| t.to_string())
}

/// Vox `add_days(d, n)`: the date `n` days after `d` (before, for a
/// negative `n`); leaving years 0001 to 9999 is a run-time error naming
/// the function `f` and the place `at`.
pub fn add_days(date: &str, n: i64, f: &str, at: &str) -> String {
    let z = day_number(date, f, at).checked_add(n);
    let min = days_from_civil(1, 1, 1);
    let max = days_from_civil(9999, 12, 31);
    match z {
        Some(z) if (min..=max).contains(&z) => {
            let (y, m, d) = civil_from_days(z);
            text(y, m, d)
        }
        _ => panic!("{f} at {at}: add_days({date}, {n}) is outside the years 0001 to 9999"),
    }
}

/// Vox `days_between(a, b)`: `b - a` in days.
pub fn days_between(a: &str, b: &str, f: &str, at: &str) -> i64 {
    day_number(b, f, at) - day_number(a, f, at)
}

/// Vox `year(d)`, `month(d)` and `day(d)`: the part `which` (0, 1, 2).
pub fn part(date: &str, which: u8, f: &str, at: &str) -> i64 {
    match (ymd(date), which) {
        (Some((y, _, _)), 0) => y,
        (Some((_, m, _)), 1) => m,
        (Some((_, _, d)), _) => d,
        (None, _) => panic!("{f} at {at}: {date:?} is not a date"),
    }
}

/// Vox `today()`: the current date in UTC.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    text(y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_real_iso_dates_are_dates() {
        for ok in [
            "2026-12-31",
            "2024-02-29",
            "2000-02-29",
            "0001-01-01",
            "9999-12-31",
        ] {
            assert!(is_date(ok), "{ok}");
        }
        for bad in [
            "2026-13-01",
            "2026-02-29",
            "1900-02-29",
            "0000-01-01",
            "2026-1-01",
            "31/12/2026",
            "2026-12-31T00:00",
            " 2026-12-31",
            "2026-04-31",
            "２０２６-01-01",
            "",
            "2026-00-10",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
        assert_eq!(parse_date(" 2026-12-31 "), Some("2026-12-31".into()));
        assert_eq!(parse_date("12/31/2026"), None);
    }

    #[test]
    fn day_numbers_round_trip_over_the_whole_range() {
        let (lo, hi) = (days_from_civil(1, 1, 1), days_from_civil(9999, 12, 31));
        let mut z = lo;
        while z <= hi {
            let (y, m, d) = civil_from_days(z);
            assert!(is_date(&text(y, m, d)), "{z}");
            assert_eq!(days_from_civil(y, m, d), z);
            z += 97;
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }

    #[test]
    fn arithmetic() {
        assert_eq!(add_days("2026-12-31", 1, "f", "x"), "2027-01-01");
        assert_eq!(add_days("2024-03-01", -1, "f", "x"), "2024-02-29");
        assert_eq!(days_between("2026-01-01", "2026-12-31", "f", "x"), 364);
        assert_eq!(days_between("2026-12-31", "2026-01-01", "f", "x"), -364);
        assert_eq!(part("2026-07-04", 0, "f", "x"), 2026);
        assert_eq!(part("2026-07-04", 1, "f", "x"), 7);
        assert_eq!(part("2026-07-04", 2, "f", "x"), 4);
        assert!(is_date(&today()));
    }

    #[test]
    #[should_panic(expected = "outside the years 0001 to 9999")]
    fn leaving_the_range_is_an_error() {
        add_days("9999-12-31", 1, "f", "x");
    }

    #[test]
    #[should_panic(expected = "outside the years")]
    fn a_huge_step_is_an_error() {
        add_days("2026-01-01", i64::MAX, "f", "x");
    }
}
