//! Message kinds: the twelve values of `orchestration_messages.message_type`'s CHECK constraint
//! (seed 004 "Database"); and the severity words of a deviation (000 REF-6: Low, Medium, High).

use super::word::{word_traits, Word};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageKind {
    ReviewRequest,
    Error,
    ContextWarning,
    Completion,
    Emergency,
    Handoff,
    Approval,
    FixProposal,
    Rejection,
    Instruction,
    ClaimBlocked,
    Resumption,
}

impl MessageKind {
    /// In the order of the schema's CHECK list.
    pub const ALL: [MessageKind; 12] = [
        MessageKind::ReviewRequest,
        MessageKind::Error,
        MessageKind::ContextWarning,
        MessageKind::Completion,
        MessageKind::Emergency,
        MessageKind::Handoff,
        MessageKind::Approval,
        MessageKind::FixProposal,
        MessageKind::Rejection,
        MessageKind::Instruction,
        MessageKind::ClaimBlocked,
        MessageKind::Resumption,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::ReviewRequest => "review_request",
            MessageKind::Error => "error",
            MessageKind::ContextWarning => "context_warning",
            MessageKind::Completion => "completion",
            MessageKind::Emergency => "emergency",
            MessageKind::Handoff => "handoff",
            MessageKind::Approval => "approval",
            MessageKind::FixProposal => "fix_proposal",
            MessageKind::Rejection => "rejection",
            MessageKind::Instruction => "instruction",
            MessageKind::ClaimBlocked => "claim_blocked",
            MessageKind::Resumption => "resumption",
        }
    }

    /// The kind `text` names; `None` for anything else (a null `message_type`, which the
    /// schema allows, or a `--sql` file's own text).
    pub fn parse(text: &str) -> Option<MessageKind> {
        <MessageKind as Word>::from_text(text)
    }

    /// `text` names this kind.
    pub fn is(self, text: &str) -> bool {
        text == self.as_str()
    }
}

word_traits!(MessageKind, "message kind");

/// A deviation's severity, as its log line writes it in brackets (`[Medium — …]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Low, Severity::Medium, Severity::High];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "Low",
            Severity::Medium => "Medium",
            Severity::High => "High",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        <Severity as Word>::from_text(text)
    }
}

word_traits!(Severity, "severity");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_are_exactly_the_schema_check_list() {
        let schema = include_str!("../../scenarios/schema.sql");
        let check = schema.split("message_type IN (").nth(1).unwrap().split(')').next().unwrap();
        let listed: Vec<&str> = check.split(',').map(|s| s.trim().trim_matches('\'')).collect();
        let ours: Vec<&str> = MessageKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(listed, ours);
        crate::vocab::word::check::round_trips::<MessageKind>("handover");
        assert!(MessageKind::Handoff.is("handoff") && !MessageKind::Handoff.is("handover"));
    }

    #[test]
    fn severities_read_back_and_order_by_weight() {
        crate::vocab::word::check::round_trips::<Severity>("medium");
        assert!(Severity::Low < Severity::Medium && Severity::Medium < Severity::High);
    }
}
