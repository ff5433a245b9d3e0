//! The conductor profiles as data (docs/protocol.md C110-C114): their names, what each sets and
//! the default. Apart from sim/input/conductor_profile.rs, which applies them to a scenario, so
//! that the scenario file's checks can name the profiles without importing what applies them.

/// The profile a scenario runs when neither its file nor the command line names one.
pub const DEFAULT_CONDUCTOR: &str = "invented";

/// One policy a profile sets: the `[conductor]` keys it covers and their values. A profile the
/// file names applies it only when the file sets none of its keys (the keys of one setting go
/// together: a scenario that chose how many reviews run at once chose the schedule).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    /// `conductor.poll_ms` (C1).
    PollMs(i64),
    /// `conductor.review_ms`, uniform between the two (C2).
    ReviewMs { min_ms: i64, max_ms: i64 },
    /// `conductor.poll_during_reviews` and `conductor.reviews_in_flight` (C3).
    Schedule { poll_during_reviews: bool, reviews_in_flight: u64 },
    /// `conductor.reject_probability` and `conductor.fix_probability` (C5).
    ReplyOdds { reject: f64, fix: f64 },
}

impl Setting {
    /// The `[conductor]` keys it covers.
    pub fn keys(&self) -> &'static [&'static str] {
        match self {
            Setting::PollMs(_) => &["poll_ms"],
            Setting::ReviewMs { .. } => &["review_ms"],
            Setting::Schedule { .. } => &["poll_during_reviews", "reviews_in_flight"],
            Setting::ReplyOdds { .. } => &["reject_probability", "fix_probability"],
        }
    }
}

/// A named conductor: the policies it sets over the invented conductor's defaults.
pub struct ConductorProfile {
    pub name: &'static str,
    pub summary: &'static str,
    pub settings: &'static [Setting],
}

/// The profiles, the default first (docs/protocol.md C110-C114 describe each).
pub const CONDUCTOR_PROFILES: &[ConductorProfile] = &[
    ConductorProfile {
        name: "invented",
        summary: "the simulator's conductor as docs/protocol.md C1-C11 and C33-C41 describe it: one review at a time inside its poll, a poll every 30 s, reviews of 1-5 min, every review approved",
        settings: &[],
    },
    ConductorProfile {
        name: "attentive",
        summary: "a fast parallel reviewer: polls every 10 s and keeps polling during reviews, up to 4 reviews at once, each 30 s-2 min",
        settings: &[
            Setting::PollMs(10_000),
            Setting::ReviewMs { min_ms: 30_000, max_ms: 120_000 },
            Setting::Schedule { poll_during_reviews: true, reviews_in_flight: 4 },
        ],
    },
    ConductorProfile {
        name: "slow-serial",
        summary: "a slow serial reviewer: one review at a time inside its poll, a poll every 60 s, reviews of 3-10 min",
        settings: &[Setting::PollMs(60_000), Setting::ReviewMs { min_ms: 180_000, max_ms: 600_000 }],
    },
    ConductorProfile {
        name: "strict",
        summary: "the invented conductor's schedule with a demanding reviewer: one review in five rejected with feedback, one in ten answered with a fix",
        settings: &[Setting::ReplyOdds { reject: 0.2, fix: 0.1 }],
    },
];

/// The profile named `name`, if there is one.
pub fn find_conductor(name: &str) -> Option<&'static ConductorProfile> {
    CONDUCTOR_PROFILES.iter().find(|p| p.name == name)
}

/// `Ok` for a conductor profile's name; otherwise the message that lists the known ones.
pub fn check_conductor_name(name: &str) -> Result<&'static ConductorProfile, String> {
    find_conductor(name).ok_or_else(|| {
        let names: Vec<&str> = CONDUCTOR_PROFILES.iter().map(|p| p.name).collect();
        format!("unknown conductor profile `{name}`; conductor profiles: {}", names.join(", "))
    })
}
