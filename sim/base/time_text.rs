//! Simulated times as people read them (issue 31): `41m02s`, `2h03m05s`, `15.4s`, never
//! `t=2458197 ms`. Only what a person reads is written so (summary.md, the timeline, stdout's
//! explanations); CSV files keep raw milliseconds for programs.

/// A duration or an instant since the epoch: `850ms`, `15.4s`, `41m02s`, `2h03m05s`.
pub fn duration(ms: i64) -> String {
    if ms < 0 {
        return format!("-{}", duration(-ms));
    }
    let s = ms / 1000;
    match ms {
        0..=999 => format!("{ms}ms"),
        1_000..=59_999 => format!("{}.{}s", s, ms % 1000 / 100),
        60_000..=3_599_999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60),
    }
}

/// `text` with every `t=N ms` and `t=A..B ms` the oracles' explanations hold written as
/// durations (`t=41m02s`, `t=15m00s..26m27s`); everything else is left as it is.
pub fn humanize_instants(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("t=") {
        let (before, after) = rest.split_at(at + 2);
        out.push_str(before);
        // `start=5 ms` is no instant: `t=` must begin a word.
        let word_start = before[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        match instant_span(after).filter(|_| word_start) {
            Some((from, to, used)) => {
                out.push_str(&duration(from));
                if let Some(to) = to {
                    out.push_str("..");
                    out.push_str(&duration(to));
                }
                rest = &after[used..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// `N ms` or `A..B ms` at the start of `text`: the times and the bytes they take.
fn instant_span(text: &str) -> Option<(i64, Option<i64>, usize)> {
    let (from, mut used) = number(text)?;
    let mut to = None;
    if let Some(tail) = text[used..].strip_prefix("..") {
        let (end, n) = number(tail)?;
        to = Some(end);
        used += 2 + n;
    }
    text[used..].starts_with(" ms").then_some((from, to, used + 3))
}

fn number(text: &str) -> Option<(i64, usize)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0).then(|| text[..digits].parse().ok().map(|n| (n, digits))).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_minutes_and_seconds() {
        assert_eq!(duration(2_458_197), "40m58s");
        assert_eq!(duration(2_462_000), "41m02s");
        assert_eq!(duration(7_385_000), "2h03m05s");
        assert_eq!(duration(86_400_000), "24h00m00s");
        assert_eq!(duration(15_420), "15.4s");
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(0), "0ms");
        assert_eq!(duration(-61_000), "-1m01s");
    }

    #[test]
    fn instants_in_explanations_are_rewritten_and_nothing_else() {
        assert_eq!(
            humanize_instants("at t=2458197 ms session S1 (launched at t=37495 ms, hung t=900000..1586676 ms) wrote"),
            "at t=40m58s session S1 (launched at t=37.4s, hung t=15m00s..26m26s) wrote"
        );
        assert_eq!(humanize_instants("start=5 ms t=x ms t=12 s at=3 ms"), "start=5 ms t=x ms t=12 s at=3 ms");
        assert_eq!(humanize_instants("t="), "t=");
    }
}
