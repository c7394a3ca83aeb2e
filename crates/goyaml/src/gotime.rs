//! Go's `time.Parse`, as far as go-yaml's `resolve.go` `parseTimestamp` uses it: whether a
//! plain scalar is a YAML 1.1 timestamp.

/// resolve.go `parseTimestamp()`: `YYYY-` then one of four Go time layouts.
pub fn parse_timestamp(s: &str) -> bool {
    use Chunk::{Day, Frac, Hour, Lit, Minute, Month, Second, Year, Zone};
    let b = s.as_bytes();
    let year_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if year_digits != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    let layouts: [&[Chunk]; 4] = [
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit("T"),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
            Zone,
        ],
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit("t"),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
            Zone,
        ],
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit(" "),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
        ],
        &[Year, Lit("-"), Month, Lit("-"), Day],
    ];
    layouts.iter().any(|layout| go_time_parse(layout, b))
}

#[derive(Clone, Copy)]
enum Chunk {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Frac,
    Zone,
    Lit(&'static str),
}

/// The subset of Go's time.Parse used by the four timestamp layouts (time/format.go).
fn go_time_parse(layout: &[Chunk], mut v: &[u8]) -> bool {
    // time/format.go getnum(): one or two digits.
    fn getnum(v: &[u8], fixed: bool) -> Option<(u32, &[u8])> {
        let d0 = v.first().filter(|c| c.is_ascii_digit())?;
        match v.get(1).filter(|c| c.is_ascii_digit()) {
            Some(d1) => Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), &v[2..])),
            None if fixed => None,
            None => Some((u32::from(d0 - b'0'), &v[1..])),
        }
    }
    let (mut year, mut month, mut day) = (0u32, 0u32, 0u32);
    for chunk in layout {
        match *chunk {
            Chunk::Lit(lit) => {
                // time/format.go skip(): a space in the layout matches a run of spaces.
                for &p in lit.as_bytes() {
                    if p == b' ' {
                        if v.first().is_some_and(|&c| c != b' ') {
                            return false;
                        }
                        while v.first() == Some(&b' ') {
                            v = &v[1..];
                        }
                    } else if v.first() == Some(&p) {
                        v = &v[1..];
                    } else {
                        return false;
                    }
                }
            }
            Chunk::Year => {
                if v.len() < 4 || !v[..4].iter().all(u8::is_ascii_digit) {
                    return false;
                }
                year = v[..4]
                    .iter()
                    .fold(0, |acc, c| acc * 10 + u32::from(c - b'0'));
                v = &v[4..];
            }
            Chunk::Month | Chunk::Day | Chunk::Hour | Chunk::Minute | Chunk::Second => {
                let Some((n, rest)) = getnum(v, false) else {
                    return false;
                };
                v = rest;
                let ok = match chunk {
                    Chunk::Month => (1..=12).contains(&n),
                    Chunk::Hour => n < 24,
                    Chunk::Minute | Chunk::Second => n < 60,
                    _ => n <= 31,
                };
                if !ok {
                    return false;
                }
                match chunk {
                    Chunk::Month => month = n,
                    Chunk::Day => day = n,
                    _ => {}
                }
            }
            Chunk::Frac => {
                if v.len() >= 2 && matches!(v[0], b'.' | b',') && v[1].is_ascii_digit() {
                    let digits = v[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                    v = &v[1 + digits..];
                }
            }
            Chunk::Zone => {
                if v.first() == Some(&b'Z') {
                    v = &v[1..];
                    continue;
                }
                if v.len() < 6 || v[3] != b':' || !matches!(v[0], b'+' | b'-') {
                    return false;
                }
                let (Some((hours, _)), Some((minutes, _))) =
                    (getnum(&v[1..3], true), getnum(&v[4..6], true))
                else {
                    return false;
                };
                if hours > 24 || minutes > 60 {
                    return false;
                }
                v = &v[6..];
            }
        }
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    v.is_empty() && day >= 1 && day <= days_in_month
}
