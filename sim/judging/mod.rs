//! The judging layer (sim/layers.txt, ARCHITECTURE.md "Layers").

pub mod collapse;
pub mod coverage;
pub mod oracle;
pub mod outside;
pub mod verdict;
