//! Converts between the policy core's [`Binding`] and the store's [`RunBinding`] column pair.
//!
//! The policy crate knows nothing of storage and the store nothing of how a binding is computed;
//! this is the one place that knows both.

use crate::record::RunBinding;
use gatehouse_policy::binding::{Binding, BindingError};

/// The stored form of a binding computed at request time.
pub fn run_binding(binding: &Binding) -> RunBinding {
    RunBinding {
        hash: binding.hash_hex(),
        json: binding.encode(),
    }
}

/// The binding an approval was granted for, refusing a stored form whose hash does not match
/// its fields (a row edited by hand must not bind anything).
pub fn binding_of(stored: &RunBinding) -> Result<Binding, BindingError> {
    let binding = Binding::decode(&stored.json)?;
    if binding.hash_hex() != stored.hash {
        return Err(BindingError::Malformed {
            reason: "stored hash does not match the bound fields",
        });
    }
    Ok(binding)
}
