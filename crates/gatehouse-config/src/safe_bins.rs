//! Safe-bin settings after merging the global `tools.exec` with an agent's `tools.exec`,
//! following OpenClaw's runtime policy:
//! - `safeBins`: the agent's list replaces the global one; neither set = the default set;
//! - `safeBinProfiles`: merged by normalized name, the agent's entry replacing the global one;
//! - `safeBinTrustedDirs`: `/bin` and `/usr/bin` plus both scopes' dirs; PATH is never trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use gatehouse_policy::exec::{DEFAULT_SAFE_BIN_TRUSTED_DIRS, DEFAULT_SAFE_BINS, SafeBinProfile};

use crate::model::{ExecConfig, SafeBinProfileConfig};

/// The effective safe-bin settings for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafeBinConfig {
    /// Normalized (trimmed, lower-case) safe-bin names.
    pub safe_bins: BTreeSet<String>,
    /// Custom profiles by normalized name, their flag lists trimmed, de-duplicated and sorted.
    pub profiles: BTreeMap<String, SafeBinProfile>,
    /// Trusted directories: the defaults, then global, then agent entries, without repeats.
    pub trusted_dirs: Vec<PathBuf>,
}

impl SafeBinConfig {
    /// Merges the global `tools.exec` with the agent's.
    pub fn resolve(global: Option<&ExecConfig>, local: Option<&ExecConfig>) -> Self {
        let listed = local
            .and_then(|l| l.safe_bins.as_ref())
            .or_else(|| global.and_then(|g| g.safe_bins.as_ref()));
        let safe_bins = match listed {
            Some(list) => list
                .iter()
                .filter_map(|name| normalize_name(name))
                .collect(),
            None => DEFAULT_SAFE_BINS
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
        };

        let mut profiles = BTreeMap::new();
        for scope in [global, local].into_iter().flatten() {
            for (name, profile) in &scope.safe_bin_profiles {
                if let Some(name) = normalize_name(name) {
                    profiles.insert(name, normalize_profile(profile));
                }
            }
        }

        let mut trusted_dirs: Vec<PathBuf> = Vec::new();
        let explicit = [global, local]
            .into_iter()
            .flatten()
            .filter_map(|scope| scope.safe_bin_trusted_dirs.as_ref())
            .flatten()
            .filter_map(|dir| normalize_dir(dir));
        for dir in DEFAULT_SAFE_BIN_TRUSTED_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(explicit)
        {
            if !trusted_dirs.contains(&dir) {
                trusted_dirs.push(dir);
            }
        }

        Self {
            safe_bins,
            profiles,
            trusted_dirs,
        }
    }

    /// Warnings for configured trusted directories that group or others may write to: whoever
    /// can write there can plant a `head` that then runs without approval. (`doctor` shows
    /// these; the defaults `/bin` and `/usr/bin` are not checked.)
    pub fn writable_trusted_dir_warnings(&self) -> Vec<String> {
        self.trusted_dirs
            .iter()
            .filter(|dir| {
                !DEFAULT_SAFE_BIN_TRUSTED_DIRS
                    .iter()
                    .any(|d| dir.as_os_str() == *d)
            })
            .filter_map(|dir| {
                let mode = std::fs::metadata(dir).ok()?.permissions().mode();
                let who = match (mode & 0o002 != 0, mode & 0o020 != 0) {
                    (true, _) => "world-writable",
                    (false, true) => "group-writable",
                    (false, false) => return None,
                };
                Some(format!(
                    "safeBinTrustedDirs includes {who} directory {}; remove it or chmod 755 it",
                    dir.display()
                ))
            })
            .collect()
    }

    /// Safe bins with neither a custom profile nor a built-in one (`has_builtin` answers for
    /// the policy core's profiles); the policy refuses these, and `doctor` warns about them.
    pub fn unprofiled(&self, has_builtin: impl Fn(&str) -> bool) -> Vec<String> {
        self.safe_bins
            .iter()
            .filter(|name| !self.profiles.contains_key(*name) && !has_builtin(name))
            .cloned()
            .collect()
    }
}

fn normalize_name(name: &str) -> Option<String> {
    let name = name.trim().to_lowercase();
    (!name.is_empty()).then_some(name)
}

fn normalize_list(list: Option<&Vec<String>>) -> Vec<String> {
    let set: BTreeSet<&str> = list
        .into_iter()
        .flatten()
        .map(|item| item.trim())
        .filter(|item| !item.is_empty())
        .collect();
    set.into_iter().map(str::to_owned).collect()
}

fn normalize_profile(profile: &SafeBinProfileConfig) -> SafeBinProfile {
    SafeBinProfile {
        min_positional: profile.min_positional,
        max_positional: profile.max_positional,
        allowed_value_flags: normalize_list(profile.allowed_value_flags.as_ref()),
        denied_flags: normalize_list(profile.denied_flags.as_ref()),
    }
}

/// Only absolute directories can be trusted: a relative one would depend on the cwd.
fn normalize_dir(dir: &str) -> Option<PathBuf> {
    let dir = dir.trim();
    if !dir.starts_with('/') {
        return None;
    }
    let trimmed = dir.trim_end_matches('/');
    Some(PathBuf::from(if trimmed.is_empty() {
        "/"
    } else {
        trimmed
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_safe_bins_replace_global_ones() {
        let global = ExecConfig {
            safe_bins: Some(vec!["jq".into(), "sort".into()]),
            ..ExecConfig::default()
        };
        let local = ExecConfig {
            safe_bins: Some(vec![" Head ".into(), String::new()]),
            ..ExecConfig::default()
        };
        let merged = SafeBinConfig::resolve(Some(&global), Some(&local));
        assert_eq!(merged.safe_bins, BTreeSet::from(["head".to_owned()]));
    }

    #[test]
    fn ignores_relative_trusted_dirs() {
        let global = ExecConfig {
            safe_bin_trusted_dirs: Some(vec!["bin".into(), "/opt/tools/bin/".into()]),
            ..ExecConfig::default()
        };
        let merged = SafeBinConfig::resolve(Some(&global), None);
        assert_eq!(
            merged.trusted_dirs,
            vec![
                PathBuf::from("/bin"),
                "/usr/bin".into(),
                "/opt/tools/bin".into()
            ]
        );
    }

    #[test]
    fn warns_about_group_or_world_writable_trusted_dirs() {
        let dir = std::env::temp_dir().join(format!("gh-trusted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let global = ExecConfig {
            safe_bin_trusted_dirs: Some(vec![dir.display().to_string()]),
            ..ExecConfig::default()
        };
        let merged = SafeBinConfig::resolve(Some(&global), None);
        let warnings = merged.writable_trusted_dir_warnings();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let after = merged.writable_trusted_dir_warnings();
        std::fs::remove_dir(&dir).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("world-writable"), "{warnings:?}");
        assert!(after.is_empty());
    }

    #[test]
    fn reports_safe_bins_without_any_profile() {
        let global = ExecConfig {
            safe_bins: Some(vec!["jq".into(), "mytool".into()]),
            ..ExecConfig::default()
        };
        let merged = SafeBinConfig::resolve(Some(&global), None);
        assert_eq!(
            merged.unprofiled(|name| name == "jq"),
            vec!["mytool".to_owned()]
        );
    }
}
