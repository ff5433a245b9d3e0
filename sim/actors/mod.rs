//! The actors layer (tests/it/layers.rs, ARCHITECTURE.md "Layers").

pub mod conductor;
pub mod ctx;
pub mod handoff;
pub mod lease;
pub mod messages;
pub mod musician;
pub mod session;
pub mod watcher;
