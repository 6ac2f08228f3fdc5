//! File-tool checks on real temporary trees: resolution, containment, symlinks, special and
//! hard-linked files, denied and protected files, globs and sizes, `apply_patch`.

use std::fs;
use std::os::unix::net::UnixListener;

use gatehouse_policy::files::{
    FileOp, FileRefusal, FileRules, FileTool, PathAccessConfig, ProtectedPath, check_file,
    check_patch,
};
use pretty_assertions::assert_eq;

use crate::file_support::{Tree, write};

#[test]
fn allows_a_relative_read_and_answers_the_canonical_path() {
    let t = Tree::new();
    t.file("ws/src/main.rs", "fn main() {}");
    let rules = t.contained();
    assert_eq!(
        t.check(&rules, FileOp::Read, "src/main.rs"),
        "ok {root}/ws/src/main.rs"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "./src//main.rs"),
        "ok {root}/ws/src/main.rs"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "src/../src/main.rs"),
        "ok {root}/ws/src/main.rs"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "{root}/ws/src/main.rs"),
        "ok {root}/ws/src/main.rs"
    );
}

#[test]
fn allows_an_absolute_path_through_a_symlinked_alias_of_the_workspace() {
    let t = Tree::new();
    t.file("ws/notes.md", "hi");
    t.link("alias", "{root}/ws");
    assert_eq!(
        t.check(&t.contained(), FileOp::Read, "{root}/alias/notes.md"),
        "ok {root}/ws/notes.md"
    );
}

#[test]
fn allows_symlinks_inside_the_workspace_and_answers_the_final_target() {
    let t = Tree::new();
    t.file("ws/real/data.txt", "x");
    t.link("ws/docs", "real");
    t.link("ws/latest", "docs/data.txt");
    let rules = t.contained();
    assert_eq!(
        t.check(&rules, FileOp::Read, "latest"),
        "ok {root}/ws/real/data.txt"
    );
    assert_eq!(
        t.check(&rules, FileOp::Edit, "docs/data.txt"),
        "ok {root}/ws/real/data.txt"
    );
}

#[test]
fn allows_a_write_that_creates_missing_directories() {
    let t = Tree::new();
    let rules = t.contained();
    assert_eq!(
        t.check(&rules, write(3), "new/deeper/file.txt"),
        "ok {root}/ws/new/deeper/file.txt +new"
    );
    t.file("ws/old.txt", "x");
    assert_eq!(t.check(&rules, write(3), "old.txt"), "ok {root}/ws/old.txt");
}

#[test]
fn denies_leaving_the_workspace_by_dotdot_or_absolute_path() {
    let t = Tree::new();
    t.file("outside/secret.txt", "x");
    let rules = t.contained();
    for path in [
        "../outside/secret.txt",
        "{root}/outside/secret.txt",
        "/etc/hostname",
        "..",
        "../ws/x",
    ] {
        assert_eq!(
            t.check(&rules, FileOp::Read, path),
            "outside-workspace",
            "{path}"
        );
    }
    assert_eq!(
        t.check(&rules, write(1), "../outside/new.txt"),
        "outside-workspace"
    );
}

#[test]
fn allows_paths_outside_the_workspace_when_workspace_only_is_off() {
    let t = Tree::new();
    t.file("outside/readme.txt", "x");
    assert_eq!(
        t.check(&t.open(), FileOp::Read, "../outside/readme.txt"),
        "ok {root}/outside/readme.txt"
    );
    let resolved = check_file(
        "../outside/readme.txt",
        FileOp::Read,
        FileTool::Fs,
        &t.open(),
    )
    .unwrap();
    assert!(!resolved.in_workspace);
}

#[test]
fn denies_a_symlink_that_leaves_the_workspace() {
    let t = Tree::new();
    t.file("outside/secret.txt", "x");
    t.link("ws/abs", "{root}/outside");
    t.link("ws/rel", "../outside/secret.txt");
    t.link("ws/there_and_back", "../ws/notes.md");
    t.file("ws/notes.md", "x");
    let rules = t.contained();
    for path in ["abs/secret.txt", "rel", "there_and_back"] {
        assert_eq!(
            t.check(&rules, FileOp::Read, path),
            "symlink-escape",
            "{path}"
        );
    }
    assert_eq!(t.check(&rules, write(1), "abs/new.txt"), "symlink-escape");
    // With workspaceOnly off the same links are followed to their targets.
    assert_eq!(
        t.check(&t.open(), FileOp::Read, "rel"),
        "ok {root}/outside/secret.txt"
    );
}

#[test]
fn denies_a_symlink_loop() {
    let t = Tree::new();
    t.link("ws/a", "b");
    t.link("ws/b", "a");
    t.link("ws/self", "self/x");
    for path in ["a", "self", "a/x"] {
        assert_eq!(
            t.check(&t.contained(), FileOp::Read, path),
            "symlink-loop",
            "{path}"
        );
        assert_eq!(t.check(&t.open(), write(1), path), "symlink-loop", "{path}");
    }
}

#[test]
fn denies_reading_a_dangling_symlink_and_allows_writing_its_target() {
    let t = Tree::new();
    t.link("ws/dangling", "made/later.txt");
    t.link("ws/dangling_out", "../outside/new.txt");
    let rules = t.contained();
    assert_eq!(t.check(&rules, FileOp::Read, "dangling"), "not-found");
    assert_eq!(
        t.check(&rules, write(1), "dangling"),
        "ok {root}/ws/made/later.txt +new"
    );
    assert_eq!(t.check(&rules, write(1), "dangling_out"), "symlink-escape");
}

#[test]
fn denies_a_symlink_swapped_in_for_a_directory_in_the_middle() {
    let t = Tree::new();
    t.file("ws/sub/file.txt", "mine");
    t.file("outside/file.txt", "theirs");
    let rules = t.contained();
    let before = check_file(
        "sub/file.txt",
        FileOp::Write { len: 1 },
        FileTool::Fs,
        &rules,
    )
    .unwrap();

    fs::remove_dir_all(t.ws.join("sub")).unwrap();
    t.link("ws/sub", "{root}/outside");
    assert_eq!(t.check(&rules, write(1), "sub/file.txt"), "symlink-escape");
    // A caller that opens the path it was given, refusing symlinks, is not fooled either.
    let opened = rustix::fs::openat2(
        rustix::fs::CWD,
        &before.path,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
        rustix::fs::ResolveFlags::NO_SYMLINKS,
    );
    assert_eq!(opened.err(), Some(rustix::io::Errno::LOOP));
}

#[test]
fn allows_dotdot_after_a_symlinked_directory_as_the_parent_of_its_target() {
    let t = Tree::new();
    t.file("ws/a/b/target.txt", "x");
    t.file("ws/a/c.txt", "deep");
    t.file("ws/c.txt", "top");
    t.link("ws/link", "a/b");
    // As the kernel resolves it: `link/..` is `a`, not the workspace.
    assert_eq!(
        t.check(&t.contained(), FileOp::Read, "link/../c.txt"),
        "ok {root}/ws/a/c.txt"
    );
    assert_eq!(
        fs::canonicalize(t.ws.join("link/../c.txt")).unwrap(),
        t.ws.join("a/c.txt")
    );
}

#[test]
fn denies_writing_a_hard_linked_file_but_allows_reading_it() {
    let t = Tree::new();
    let original = t.file("ws/original.txt", "x");
    fs::hard_link(&original, t.ws.join("alias.txt")).unwrap();
    let rules = t.contained();
    assert_eq!(t.check(&rules, write(1), "alias.txt"), "hard-link");
    assert_eq!(t.check(&rules, FileOp::Edit, "original.txt"), "hard-link");
    assert_eq!(
        t.check(&rules, FileOp::Read, "alias.txt"),
        "ok {root}/ws/alias.txt"
    );
}

#[test]
fn denies_fifos_sockets_devices_and_directories() {
    let t = Tree::new();
    let fifo = t.ws.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let _socket = UnixListener::bind(t.ws.join("sock")).unwrap();
    t.link("ws/null", "/dev/null");
    t.dir("ws/subdir");
    let rules = t.open();
    assert_eq!(t.check(&rules, FileOp::Read, "pipe"), "special-file");
    assert_eq!(t.check(&rules, write(1), "pipe"), "special-file");
    assert_eq!(t.check(&rules, FileOp::Read, "sock"), "special-file");
    assert_eq!(t.check(&rules, FileOp::Read, "null"), "system-path");
    assert_eq!(
        t.check(&t.contained(), FileOp::Read, "null"),
        "symlink-escape"
    );
    assert_eq!(t.check(&rules, FileOp::Read, "subdir"), "directory");
    assert_eq!(t.check(&rules, FileOp::Read, "."), "directory");
    assert_eq!(
        t.check(&rules, FileOp::Read, "/proc/self/environ"),
        "system-path"
    );
    // Refused by its text too: `/proc/self/root` would otherwise lead the walk back to `/`.
    assert_eq!(
        t.check(&rules, FileOp::Read, "/proc/self/root/etc/hostname"),
        "system-path"
    );
}

#[test]
fn denies_paths_through_files_and_dotdot_after_a_missing_component() {
    let t = Tree::new();
    t.file("ws/file.txt", "x");
    let rules = t.contained();
    assert_eq!(
        t.check(&rules, FileOp::Read, "file.txt/x"),
        "not-a-directory"
    );
    // A trailing `/` or `/.` asks for a directory, as the kernel reads it.
    assert_eq!(
        t.check(&rules, FileOp::Read, "file.txt/"),
        "not-a-directory"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "file.txt/."),
        "not-a-directory"
    );
    assert_eq!(t.check(&rules, write(1), "new-dir/"), "not-a-directory");
    // Found by check_props: the absolute form lost its `/.` when the workspace was stripped.
    assert_eq!(
        t.check(&rules, FileOp::Read, "{root}/ws/file.txt/."),
        "not-a-directory"
    );
    assert_eq!(t.check(&rules, write(1), "file.txt/x"), "not-a-directory");
    assert_eq!(
        t.check(&rules, write(1), "missing/../x"),
        "unresolvable-tail"
    );
    assert_eq!(t.check(&rules, FileOp::Read, "missing.txt"), "not-found");
    assert_eq!(t.check(&rules, FileOp::Edit, "missing.txt"), "not-found");
}

#[test]
fn denies_credential_files_even_inside_the_workspace() {
    let t = Tree::new();
    for file in [
        ".env",
        ".env.local",
        "app/.ENV",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".ssh/id_ed25519",
        "keys/id_rsa",
        "certs/server.pem",
        "deploy/tls.key",
        ".aws/credentials",
        ".config/gcloud/application_default_credentials.json",
        ".kube/config",
        ".docker/config.json",
        "exec-approvals.json",
    ] {
        t.file(&format!("ws/{file}"), "secret");
        assert_eq!(
            t.check(&t.contained(), FileOp::Read, file),
            "denied-file",
            "{file}"
        );
        assert_eq!(
            t.check(&t.contained(), write(1), file),
            "denied-file",
            "{file}"
        );
    }
    assert_eq!(
        t.check(&t.open(), FileOp::Read, "~/.ssh/id_rsa"),
        "denied-file"
    );
}

#[test]
fn denies_denied_files_behind_compatibility_forms_and_symlinks() {
    let t = Tree::new();
    t.file("ws/.env", "TOKEN=x");
    t.link("ws/notes.txt", ".env");
    let rules = t.contained();
    // Fullwidth, no-break space and ideographic space variants fold onto `.env`.
    for path in ["．ｅｎｖ", ".env\u{a0}", ".ＥＮＶ.local", "notes.txt"] {
        assert_eq!(t.check(&rules, write(1), path), "denied-file", "{path:?}");
    }
    assert_eq!(t.check(&rules, FileOp::Read, "notes.txt"), "denied-file");
}

#[test]
fn denies_writes_to_files_other_programs_run_but_allows_reading_them() {
    let t = Tree::new();
    t.file("ws/.git/config", "[core]");
    t.file("ws/.bashrc", "");
    let rules = t.contained();
    assert_eq!(
        t.check(&rules, write(1), ".git/hooks/pre-commit"),
        "denied-file"
    );
    assert_eq!(t.check(&rules, FileOp::Edit, ".git/config"), "denied-file");
    assert_eq!(t.check(&rules, write(1), ".bashrc"), "denied-file");
    assert_eq!(
        t.check(&rules, FileOp::Read, ".git/config"),
        "ok {root}/ws/.git/config"
    );
}

#[test]
fn denies_the_gateways_own_files() {
    let t = Tree::new();
    t.file("ws/gatehouse.json5", "{}");
    t.file("home/.gatehouse/state/approvals.db", "x");
    t.link("ws/state", "{root}/home/.gatehouse/state");
    let mut config = t.config();
    config.protected = vec![
        ProtectedPath {
            path: t.ws.join("gatehouse.json5"),
            what: "the gateway's config file".into(),
        },
        ProtectedPath {
            path: t.root.join("home/.gatehouse"),
            what: "the gateway's data directory".into(),
        },
    ];
    let rules = FileRules::new(config).unwrap();
    assert_eq!(
        t.check(&rules, FileOp::Read, "gatehouse.json5"),
        "protected-path"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "state/approvals.db"),
        "protected-path"
    );
    assert_eq!(
        t.check(&rules, write(1), "~/.gatehouse/new"),
        "protected-path"
    );
}

#[test]
fn denies_a_protected_directory_created_after_the_rules_under_a_symlinked_parent() {
    let t = Tree::new();
    t.dir("outside/real-home");
    t.link("home-alias", "{root}/outside/real-home");
    let mut config = t.config();
    config.protected = vec![ProtectedPath {
        path: t.root.join("home-alias/.gatehouse"),
        what: "the gateway's data directory".into(),
    }];
    let rules = FileRules::new(config).unwrap();
    t.file("outside/real-home/.gatehouse/token", "secret");
    assert_eq!(
        t.check(
            &rules,
            FileOp::Read,
            "{root}/outside/real-home/.gatehouse/token"
        ),
        "protected-path"
    );
}

#[test]
fn denies_control_and_bidi_characters() {
    let t = Tree::new();
    let rules = t.open();
    for path in [
        "a\nb",
        "a\0b",
        "x\u{202e}txt.exe",
        "\u{2066}a",
        "a\u{200b}",
        "a\u{7f}",
    ] {
        assert_eq!(
            t.check(&rules, FileOp::Read, path),
            "unsafe-character",
            "{path:?}"
        );
        assert_eq!(
            t.check(&rules, write(1), path),
            "unsafe-character",
            "{path:?}"
        );
    }
    t.file("outside/ok.txt", "x");
    t.link("ws/odd", "../outside/ok\u{202e}.txt");
    assert_eq!(t.check(&rules, FileOp::Read, "odd"), "unsafe-character");
}

#[test]
fn denies_empty_long_and_tilde_user_paths() {
    let t = Tree::new();
    let rules = t.open();
    assert_eq!(t.check(&rules, FileOp::Read, ""), "invalid-path");
    assert_eq!(
        t.check(&rules, FileOp::Read, &"a/".repeat(3000)),
        "invalid-path"
    );
    assert_eq!(t.check(&rules, FileOp::Read, "~root/x"), "invalid-path");
    let mut config = t.config();
    config.home = None;
    let no_home = FileRules::new(config).unwrap();
    assert_eq!(t.check(&no_home, FileOp::Read, "~/x"), "invalid-path");
}

#[test]
fn denies_by_tools_read_and_write_globs_and_sizes() {
    let t = Tree::new();
    t.file("ws/src/lib.rs", "0123456789");
    t.file("ws/build/out.log", "x");
    t.file("ws/README.md", "x");
    let mut config = t.config();
    config.workspace_only = true;
    config.read = PathAccessConfig {
        allow: Some(vec!["src/**".into(), "*.md".into()]),
        deny: vec![],
        max_size_bytes: Some(5),
        ..PathAccessConfig::new("tools.read")
    };
    config.write = PathAccessConfig {
        allow: None,
        deny: vec!["build".into()],
        max_size_bytes: Some(100),
        ..PathAccessConfig::new("tools.write")
    };
    let rules = FileRules::new(config).unwrap();
    assert_eq!(t.check(&rules, FileOp::Read, "src/lib.rs"), "too-large");
    assert_eq!(
        t.check(&rules, FileOp::Read, "README.md"),
        "ok {root}/ws/README.md"
    );
    assert_eq!(
        t.check(&rules, FileOp::Read, "build/out.log"),
        "path-not-allowed"
    );
    assert_eq!(t.check(&rules, write(10), "build/new.log"), "path-denied");
    assert_eq!(t.check(&rules, write(101), "src/new.rs"), "too-large");
    assert_eq!(
        t.check(&rules, write(100), "src/new.rs"),
        "ok {root}/ws/src/new.rs +new"
    );
    // An edit reads as well: the read allow list and size both apply.
    assert_eq!(t.check(&rules, FileOp::Edit, "src/lib.rs"), "too-large");
    let refusal = check_file("build/new.log", write(1), FileTool::Fs, &rules).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        format!(
            "path {:?} matches tools.write.deny entry \"build\"",
            t.ws.join("build/new.log")
        )
    );
}

#[test]
fn denies_tools_fs_deny_paths_entries() {
    let t = Tree::new();
    t.file("ws/data/customers.sqlite", "x");
    let mut config = t.config();
    config.deny_paths = vec!["*.sqlite".into()];
    let rules = FileRules::new(config).unwrap();
    assert_eq!(
        t.check(&rules, FileOp::Read, "data/customers.sqlite"),
        "denied-file"
    );
}

#[test]
fn denies_an_apply_patch_if_any_path_it_touches_is_refused() {
    let t = Tree::new();
    t.file("ws/src/a.rs", "old\n");
    t.file("ws/old.txt", "x");
    // OpenClaw's default: apply_patch stays in the workspace even with workspaceOnly off.
    let rules = t.open();
    let patch = |body: &str| format!("*** Begin Patch\n{body}\n*** End Patch");
    let paths = |body: &str| {
        check_patch(&patch(body), &rules)
            .map(|files| files.iter().map(|f| t.show(&f.path)).collect::<Vec<_>>())
            .map_err(|e| e.rule())
    };
    assert_eq!(
        paths(
            "*** Add File: docs/new.md\n+hi\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-old\n+new\n*** Delete File: old.txt"
        ),
        Ok(vec![
            "{root}/ws/docs/new.md".to_owned(),
            "{root}/ws/src/a.rs".to_owned(),
            "{root}/ws/src/b.rs".to_owned(),
            "{root}/ws/old.txt".to_owned(),
        ])
    );
    assert_eq!(
        paths("*** Add File: ../outside/x\n+hi"),
        Err("outside-workspace")
    );
    assert_eq!(
        paths("*** Delete File: /etc/passwd"),
        Err("outside-workspace")
    );
    assert_eq!(
        paths("*** Update File: src/a.rs\n*** Move to: .env\n@@\n-old\n+new"),
        Err("denied-file")
    );
    assert_eq!(paths("*** Delete File: missing.txt"), Err("not-found"));
    assert_eq!(
        check_patch("*** Begin Patch\n*** Add File: x\n+y", &rules).map_err(|e| e.rule()),
        Err("patch-unparsed")
    );
    assert!(matches!(
        check_patch("diff --git a/x b/x", &rules),
        Err(FileRefusal::Patch(_))
    ));
}

#[test]
fn allows_apply_patch_outside_when_its_workspace_only_is_off() {
    let t = Tree::new();
    let mut config = t.config();
    config.apply_patch_workspace_only = false;
    let rules = FileRules::new(config).unwrap();
    let patch = "*** Begin Patch\n*** Add File: ../outside/x.txt\n+hi\n*** End Patch";
    let files = check_patch(patch, &rules).unwrap();
    assert_eq!(t.show(&files[0].path), "{root}/outside/x.txt");
    // tools.fs.workspaceOnly still wins.
    config = t.config();
    config.apply_patch_workspace_only = false;
    config.workspace_only = true;
    let rules = FileRules::new(config).unwrap();
    assert_eq!(
        check_patch(patch, &rules).unwrap_err().rule(),
        "outside-workspace"
    );
}

#[test]
fn denies_bad_globs_and_a_missing_workspace_at_load() {
    let t = Tree::new();
    let mut config = t.config();
    config.read.deny = vec!["a[".into()];
    assert!(FileRules::new(config).is_err());
    let missing = gatehouse_policy::files::FileRulesConfig::new(t.root.join("nope"));
    assert!(FileRules::new(missing).is_err());
}
