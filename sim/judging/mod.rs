//! The judging layer (tests/it/layers.rs, ARCHITECTURE.md "Layers").

pub mod collapse;
pub mod coverage;
pub mod oracle;
pub mod outside;
pub mod verdict;
