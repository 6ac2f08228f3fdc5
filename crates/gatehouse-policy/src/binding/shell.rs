//! The binding of a shell string: what `system.run` spawns is `sh -c TEXT`, so the argv form's
//! rules alone would bind the shell and the text, and `bash run.sh` inside the text would run
//! whatever `run.sh` holds by then. Here every segment the analysis found binds its program
//! (canonical path and file identity) and the files it reads its code from, exactly as the
//! argv form binds its one program: an edit of `run.sh`, `main.py` or the makefile between
//! approval and run is a `binding-mismatch`.

use std::fs;
use std::path::{Path, PathBuf};

use super::{
    Binding, BindingError, BindingInput, BindingMismatch, Digest, Launch, Script, ScriptAmbiguity,
    canonical_cwd, digest_fields, file_identity, hash_file, script_operand,
};
use crate::exec::{SatisfiedBy, SegmentEvaluation};

impl Binding {
    /// The binding of a shell string: `input` is the run as spawned (`sh -c TEXT`, the shell as
    /// the executable) and `segments` the analysis of TEXT (`ExecEvaluation::segments`). Besides
    /// what [`Binding::compute`] binds, the executable field covers every segment's program and
    /// the script field every file a segment runs code from.
    ///
    /// Refuses, as `compute` does, when a file cannot be named exactly: a program that does not
    /// resolve, an ambiguous script, and — since the directory a `cd` leaves the shell in is
    /// known only at run time (a failed `cd` stays where it was) — a segment after a `cd` that
    /// runs a program by path or reads code from files (`cd sub && make`; `make -C sub` can be
    /// bound).
    pub fn compute_shell(
        input: &BindingInput<'_>,
        segments: &[SegmentEvaluation],
    ) -> Result<Binding, BindingError> {
        Binding::compute_shell_with_files(input, segments).map(|(binding, _)| binding)
    }

    /// [`Binding::program_files`] for a shell string: the shell and what it reads, then every
    /// segment's program and the files it reads its code from, in order.
    pub fn shell_program_files(
        input: &BindingInput<'_>,
        segments: &[SegmentEvaluation],
    ) -> Result<Vec<PathBuf>, BindingError> {
        Binding::compute_shell_with_files(input, segments).map(|(_, files)| files)
    }

    fn compute_shell_with_files(
        input: &BindingInput<'_>,
        segments: &[SegmentEvaluation],
    ) -> Result<(Binding, Vec<PathBuf>), BindingError> {
        let (mut binding, mut files) = Binding::compute_with_files(input)?;
        let cwd = canonical_cwd(input)?;
        let launch = Launch {
            cwd: &cwd,
            env: input.env,
            assigned: Vec::new(),
        };
        let mut programs: Vec<Vec<u8>> = vec![binding.executable.to_vec()];
        let mut scripts: Vec<Digest> = binding.script.into_iter().collect();
        let mut moved = false;
        for segment in segments {
            let Some(program) = segment.argv.first() else {
                continue;
            };
            if segment.satisfied_by == Some(SatisfiedBy::Builtin) {
                moved |= program == "cd";
                continue;
            }
            let executable = segment_executable(segment)?;
            let script = script_operand(program, &executable, &segment.argv[1..], &launch)?;
            // A `#!` program found on `PATH` is bound by its contents wherever the shell is.
            let relative = match &script {
                Some(Script::File(path)) => *path != executable || program.contains('/'),
                Some(Script::Program(_)) => true,
                None => program.contains('/'),
            };
            if moved && relative {
                return Err(BindingError::ScriptNotIdentified {
                    program: program.clone(),
                    reason: ScriptAmbiguity::UnclearWrapper("cd".to_owned()),
                });
            }
            let identity =
                file_identity(&executable).map_err(|source| BindingError::Executable {
                    path: executable.clone(),
                    source,
                })?;
            let mut bound = executable.as_os_str().as_encoded_bytes().to_vec();
            bound.extend(identity);
            programs.push(bound);
            files.push(executable);
            if let Some(script) = &script {
                files.extend(script.paths().map(Path::to_path_buf));
            }
            match script {
                Some(Script::File(path)) => scripts.push(hash_file(&path)?),
                Some(Script::Program(bound)) => scripts.push(bound.digest()),
                None => {}
            }
        }
        binding.executable = digest_fields(programs.iter().map(Vec::as_slice));
        binding.script =
            (!scripts.is_empty()).then(|| digest_fields(scripts.iter().map(|d| d.as_slice())));
        files.dedup();
        Ok((binding, files))
    }

    /// [`Binding::verify`] for a shell string: recomputes with [`Binding::compute_shell`] from
    /// the analysis right before the run.
    pub fn verify_shell(
        &self,
        input: &BindingInput<'_>,
        segments: &[SegmentEvaluation],
    ) -> Result<(), BindingMismatch> {
        self.verify_against(Binding::compute_shell(input, segments))
    }
}

/// The program a segment starts first: its first wrapper when it has one of its own (the
/// looked-through entry named as its first word), else the program itself, canonical.
fn segment_executable(segment: &SegmentEvaluation) -> Result<PathBuf, BindingError> {
    let first = segment.argv.first().map(String::as_str).unwrap_or_default();
    let resolved = segment
        .looked_through
        .iter()
        .find(|wrapper| wrapper.word == first)
        .map_or(segment.resolved_path.as_deref(), |wrapper| {
            wrapper.resolved_path.as_deref()
        });
    let missing = || BindingError::Executable {
        path: PathBuf::from(first),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "the program did not resolve"),
    };
    let path: &Path = resolved.ok_or_else(missing)?;
    fs::canonicalize(path).map_err(|source| BindingError::Executable {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::exec::{AllowlistEntry, ExecPolicy, ExecRequest, evaluate};

    struct Host {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    impl Host {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let root = fs::canonicalize(dir.path()).unwrap();
            for bin in ["bash", "python3", "make", "nice", "ls"] {
                let path = root.join("bin").join(bin);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, "#!/bin/sh\n").unwrap();
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            }
            fs::create_dir_all(root.join("work/sub")).unwrap();
            fs::write(root.join("work/run.sh"), "echo one\n").unwrap();
            fs::write(root.join("work/main.py"), "print(1)\n").unwrap();
            fs::write(root.join("work/Makefile"), "all:\n\ttrue\n").unwrap();
            Host { _dir: dir, root }
        }

        /// `compute` of `sh -c TEXT` as `system.run` binds it, with the segments of `text`
        /// evaluated under an allowlist admitting everything.
        fn bound<T>(
            &self,
            text: &str,
            compute: impl FnOnce(&BindingInput<'_>, &[SegmentEvaluation]) -> T,
        ) -> T {
            let request = ExecRequest::shell(text, self.root.join("work"))
                .with_inherited_env("PATH", self.root.join("bin").display().to_string());
            let policy = ExecPolicy {
                allowlist: vec![AllowlistEntry::new("/**")],
                ..ExecPolicy::default()
            };
            let evaluation = evaluate(&request, &policy);
            let argv = ["sh".to_owned(), "-c".to_owned(), text.to_owned()];
            let env = BTreeMap::new();
            let input = BindingInput {
                cwd: &self.root.join("work"),
                argv: &argv,
                env: &env,
                agent_id: "main",
                session_key: "s",
                resolved_executable: Path::new("/bin/sh"),
            };
            compute(&input, &evaluation.segments)
        }

        fn binding(&self, text: &str) -> Result<Binding, BindingError> {
            self.bound(text, Binding::compute_shell)
        }
    }

    #[test]
    fn denies_an_edited_script_of_any_segment() {
        let host = Host::new();
        for (text, file) in [
            ("bash run.sh", "run.sh"),
            ("python3 main.py", "main.py"),
            ("ls && nice bash run.sh", "run.sh"),
            ("make all", "Makefile"),
            ("sh -c 'python3 main.py'", "main.py"),
        ] {
            let before = host.binding(text).unwrap();
            assert!(before.binds_script(), "{text}");
            let path = host.root.join("work").join(file);
            let original = fs::read(&path).unwrap();
            fs::write(&path, "touch pwned\n").unwrap();
            let after = host.binding(text).unwrap();
            assert_eq!(
                before.mismatch(&after),
                Some(super::super::BindingField::Script),
                "{text}"
            );
            fs::write(&path, original).unwrap();
            if file != "Makefile" {
                // Makefiles are bound by which file they are as well; scripts by contents.
                assert_eq!(
                    before.mismatch(&host.binding(text).unwrap()),
                    None,
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn denies_a_replaced_program_of_any_segment() {
        let host = Host::new();
        let before = host.binding("ls && nice ls").unwrap();
        let ls = host.root.join("bin/ls");
        fs::remove_file(&ls).unwrap();
        fs::write(&ls, "#!/bin/sh\nid\n").unwrap();
        fs::set_permissions(&ls, fs::Permissions::from_mode(0o755)).unwrap();
        let after = host.binding("ls && nice ls").unwrap();
        assert_eq!(
            before.mismatch(&after),
            Some(super::super::BindingField::Executable)
        );
    }

    /// A sandboxed runner checks each file the binding read against what the sandbox sees,
    /// so the list must name every program and program file of every segment.
    #[test]
    fn lists_every_file_the_binding_reads() {
        let host = Host::new();
        let text = "ls && nice bash run.sh && make all";
        let files = host.bound(text, Binding::shell_program_files).unwrap();
        for expected in [
            "bin/ls",
            "bin/nice",
            "work/run.sh",
            "bin/make",
            "work/Makefile",
        ] {
            assert!(
                files.contains(&host.root.join(expected)),
                "{expected} in {files:?}"
            );
        }
        assert_eq!(files.first(), fs::canonicalize("/bin/sh").ok().as_ref());
        let direct = ["bash".to_owned(), "run.sh".to_owned()];
        let bash = host.root.join("bin/bash");
        let files = host.bound("true", |input, _| {
            Binding::program_files(&BindingInput {
                argv: &direct,
                resolved_executable: &bash,
                ..*input
            })
        });
        assert_eq!(
            files.unwrap(),
            [bash.clone(), host.root.join("work/run.sh")]
        );
    }

    #[test]
    fn refuses_files_it_cannot_name_after_a_cd() {
        let host = Host::new();
        assert!(host.binding("cd sub && ls").is_ok());
        assert!(host.binding("cd sub && make").is_err());
        assert!(host.binding("cd sub; bash run.sh").is_err());
        assert!(host.binding("nosuchprogram").is_err());
    }
}
