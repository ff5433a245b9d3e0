//! The input layer (tests/it/layers.rs, ARCHITECTURE.md "Layers").

pub mod conductor_profile;
pub mod conductor_table;
pub mod scenario;
pub mod scenario_list;
pub mod scenario_lookup;
pub mod sql_catalog;
pub mod variant;
