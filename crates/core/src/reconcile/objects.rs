//! The objects on one cluster at one step of the fixed point, and who put each there: what
//! `sources` resolves a `substituteFrom` against and `makers` reads for what makes a Secret at
//! run time (both read it, so it sits below them; `World::versions` is in `sources`, beside
//! the `Outside` it reads).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::flux::ObjectId;

/// One object on the cluster and who put it there.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub(crate) object: Arc<Value>,
    /// `applied by ns/name`, `bootstrap: ...`, `fluxsim.toml`.
    pub(crate) from: String,
}

/// The objects on one cluster at one step of the fixed point.
#[derive(Debug, Default)]
pub(crate) struct World {
    pub(crate) objects: BTreeMap<ObjectId, Placed>,
    /// `[[bootstrap.objects]]`: they give the values of an encrypted object of the same id.
    pub(crate) declared: BTreeMap<ObjectId, Placed>,
}
