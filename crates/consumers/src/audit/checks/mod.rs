//! The audit's rules, one file per family: what each `${...}` does once substituted
//! (`expressions`: FS101–FS104, FS113; `types`: FS105), what ships verbatim (`verbatim`:
//! FS106, FS107), the var sources (`sources`: FS108, FS109, FS111, FS112) and other
//! clusters' values shipping as literals (`literals`: FS110).

pub(crate) mod expressions;
pub(crate) mod literals;
pub(crate) mod sources;
pub(crate) mod types;
pub(crate) mod verbatim;
