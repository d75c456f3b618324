//! A UTC timestamp written the way chrono's `Serialize` writes it (RFC 3339, `Z`, the
//! fraction in 0, 3, 6 or 9 digits, whichever is exact), without the generic formatter:
//! the decision writer serialises one per record, the offer answer one per offer and the
//! Redis wallet one per ledger line, and chrono's path through `fmt` and `collect_str` cost
//! more than the rest of the record's fixed fields together.

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde::{Serialize, Serializer};

/// Longest text: `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`.
const MAX_LEN: usize = 30;

/// Two decimal digits of `n` (below 100) at `out[at..at + 2]`.
fn two(out: &mut [u8; MAX_LEN], at: usize, n: u32) {
    // Each digit is below 10, so the casts are exact.
    out[at] = b'0' + (n / 10 % 10) as u8;
    out[at + 1] = b'0' + (n % 10) as u8;
}

/// `width` decimal digits of `n` from `out[at]`, zero-padded; returns the next index.
fn digits(out: &mut [u8; MAX_LEN], at: usize, mut n: u32, width: usize) -> usize {
    for i in (at..at + width).rev() {
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    at + width
}

/// Serialises `at` as chrono does (`serialize_with` for `DateTime<Utc>` fields). Years
/// outside 0 to 9999, which chrono writes with a sign, go through chrono itself.
pub fn serialize<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    let Ok(year @ 0..=9999) = u32::try_from(at.year()) else {
        return at.serialize(s);
    };
    let mut out = [0u8; MAX_LEN];
    two(&mut out, 0, year / 100);
    two(&mut out, 2, year % 100);
    out[4] = b'-';
    two(&mut out, 5, at.month());
    out[7] = b'-';
    two(&mut out, 8, at.day());
    out[10] = b'T';
    two(&mut out, 11, at.hour());
    out[13] = b':';
    two(&mut out, 14, at.minute());
    out[16] = b':';
    // A leap second carries its extra second in the nanoseconds; chrono writes it as :60.
    let (mut sec, mut nano) = (at.second(), at.nanosecond());
    if nano >= 1_000_000_000 {
        sec += 1;
        nano -= 1_000_000_000;
    }
    two(&mut out, 17, sec);
    let mut end = 19;
    if nano != 0 {
        out[end] = b'.';
        end = if nano % 1_000_000 == 0 {
            digits(&mut out, end + 1, nano / 1_000_000, 3)
        } else if nano % 1_000 == 0 {
            digits(&mut out, end + 1, nano / 1_000, 6)
        } else {
            digits(&mut out, end + 1, nano, 9)
        };
    }
    out[end] = b'Z';
    // Only ASCII digits and separators were written.
    match std::str::from_utf8(&out[..=end]) {
        Ok(text) => s.serialize_str(text),
        Err(_) => at.serialize(s),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone};

    use super::*;

    /// The JSON text of `at` through this serializer.
    fn fast(at: &DateTime<Utc>) -> String {
        let mut out = Vec::new();
        serialize(at, &mut serde_json::Serializer::new(&mut out)).expect("serialises");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn writes_what_chrono_writes() {
        let base = Utc
            .with_ymd_and_hms(2026, 11, 24, 3, 4, 5)
            .single()
            .expect("valid");
        let mut cases = vec![base, Utc::now()];
        for nanos in [
            0,
            1,
            7_000,
            120_000_000,
            999_999_999,
            123_456_000,
            5_000_000,
        ] {
            cases.push(base + chrono::Duration::nanoseconds(nanos));
        }
        for year in [0, 1, 999, 1970, 9999, -1, 10_000, 262_000] {
            let date = NaiveDate::from_ymd_opt(year, 1, 2).expect("date");
            let at = date
                .and_hms_nano_opt(23, 59, 58, 10)
                .expect("time")
                .and_utc();
            cases.push(at);
        }
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .expect("leap second")
            .and_utc();
        cases.push(leap);
        for at in cases {
            let chrono = serde_json::to_string(&at).expect("chrono");
            assert_eq!(fast(&at), chrono);
        }
        assert_eq!(fast(&leap), "\"2016-12-31T23:59:60.500Z\"");
    }
}
