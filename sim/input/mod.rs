//! The input layer (sim/layers.txt, ARCHITECTURE.md "Layers").

pub mod conductor_profile;
pub mod scenario;
pub mod scenario_list;
pub mod scenario_lookup;
pub mod sql_catalog;
pub mod variant;
