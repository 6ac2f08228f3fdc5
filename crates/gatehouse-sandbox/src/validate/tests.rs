use super::*;

/// A host with a home, a data directory and a config file under one temporary root.
struct Host {
    _dir: tempfile::TempDir,
    root: PathBuf,
    context: HostContext,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for sub in [
            "home/Documents/notes",
            "home/.ssh",
            "data",
            "allowed/w",
            "other",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("config.json5"), "{}").unwrap();
        std::os::unix::fs::symlink(root.join("home/Documents"), root.join("home/Linked")).unwrap();
        let context = HostContext {
            home: root.join("home"),
            user: "ann".into(),
            data_dir: root.join("data"),
            protected: vec![root.join("config.json5")],
        };
        Host {
            _dir: dir,
            root,
            context,
        }
    }

    fn check(&self, raw: &str) -> Result<PathBuf, MountRefusal> {
        let deny = DenyList::new(&self.context);
        let roots = AllowedRoots::new(
            &[
                "~".to_owned(),
                self.root.join("allowed").display().to_string(),
            ],
            &self.context.home,
        )
        .unwrap();
        check_source(raw, &self.context.home, &deny, Some(&roots))
    }

    /// Asserts a `Denied` refusal and returns its message.
    fn denied(&self, raw: &str, denied: &Path, relation: Relation) -> String {
        match self.check(raw) {
            Err(refusal @ MountRefusal::Denied { .. }) => {
                let MountRefusal::Denied {
                    denied: found,
                    relation: how,
                    ..
                } = &refusal
                else {
                    unreachable!()
                };
                assert_eq!((found.as_path(), *how), (denied, relation), "{raw}");
                refusal.to_string()
            }
            other => panic!("{raw}: {other:?}"),
        }
    }
}

#[test]
fn allows_plain_directories_inside_the_allowed_roots() {
    let host = Host::new();
    assert_eq!(
        host.check("~/Documents/notes").unwrap(),
        host.root.join("home/Documents/notes")
    );
    let w = host.root.join("allowed/w");
    assert_eq!(host.check(&w.display().to_string()).unwrap(), w);
}

#[test]
fn refuses_the_root_and_system_directories() {
    let host = Host::new();
    assert_eq!(host.check("/"), Err(MountRefusal::Root));
    assert_eq!(
        MountRefusal::Root.to_string(),
        "/ is the whole host: mounting it would expose every secret and control socket on it"
    );
    for (raw, denied, relation) in [
        ("/etc", "/etc", Relation::Is),
        ("/etc/ssl", "/etc", Relation::Inside),
        ("/proc/1/root", "/proc", Relation::Inside),
        ("/sys", "/sys", Relation::Is),
        ("/dev", "/dev", Relation::Is),
        ("/boot", "/boot", Relation::Is),
        ("/run", "/run", Relation::Is),
    ] {
        let message = host.denied(raw, Path::new(denied), relation);
        assert!(message.contains("a system directory"), "{message}");
    }
}

#[test]
fn refuses_runtime_sockets_and_what_contains_them() {
    let host = Host::new();
    let message = host.denied(
        "/var/run/docker.sock",
        Path::new("/var/run/docker.sock"),
        Relation::Is,
    );
    assert_eq!(
        message,
        "/var/run/docker.sock is /var/run/docker.sock, where container runtimes and system \
         services keep their control sockets and state: whoever can reach them controls the host"
    );
    for (raw, denied, relation) in [
        (
            "/run/containerd/containerd.sock",
            "/run/containerd",
            Relation::Inside,
        ),
        ("/run/podman/podman.sock", "/run/podman", Relation::Inside),
        ("/run/crio/crio.sock", "/run/crio", Relation::Inside),
        ("/run/libvirt", "/run/libvirt", Relation::Is),
        ("/run/dbus/system_bus_socket", "/run/dbus", Relation::Inside),
        ("/run/user/1000/bus", "/run/user", Relation::Inside),
        ("/var/lib", "/var/lib/docker", Relation::Contains),
    ] {
        let message = host.denied(raw, Path::new(denied), relation);
        assert!(message.contains("control sockets"), "{message}");
    }
}

#[test]
fn refuses_the_gateways_own_state_and_config() {
    let host = Host::new();
    let data = host.root.join("data");
    let message = host.denied(&data.display().to_string(), &data, Relation::Is);
    assert!(message.ends_with(
        "the gateway's own state or configuration: its tokens, approvals and audit log"
    ));
    host.denied(
        &data.join("sandbox").display().to_string(),
        &data,
        Relation::Inside,
    );
    host.denied(&host.root.display().to_string(), &data, Relation::Contains);
    let config = host.root.join("config.json5");
    host.denied(&config.display().to_string(), &config, Relation::Is);
}

#[test]
fn refuses_credentials_in_the_home_and_the_home_itself() {
    let host = Host::new();
    let home = &host.context.home;
    let message = host.denied("~/.ssh", &home.join(".ssh"), Relation::Is);
    assert_eq!(
        message,
        format!(
            "{0}/.ssh is {0}/.ssh, where keys, tokens and cloud credentials are kept",
            home.display()
        )
    );
    host.denied("~/.ssh/keys", &home.join(".ssh"), Relation::Inside);
    host.denied(
        "~/.config/gcloud",
        &home.join(".config/gcloud"),
        Relation::Is,
    );
    host.denied("~/.aws/credentials", &home.join(".aws"), Relation::Inside);
    host.denied(
        "~/.docker/config.json",
        &home.join(".docker"),
        Relation::Inside,
    );
    host.denied("~/.kube", &home.join(".kube"), Relation::Is);
    host.denied("~/.azure", &home.join(".azure"), Relation::Is);
    host.denied("~/.gnupg", &home.join(".gnupg"), Relation::Is);
    // Mounting the home, or a directory above the credentials, would expose them.
    host.denied("~", &home.join(".ssh"), Relation::Contains);
    host.denied(
        "~/.config",
        &home.join(".config/gcloud"),
        Relation::Contains,
    );
    host.denied("/root/.ssh", Path::new("/root/.ssh"), Relation::Is);
}

#[test]
fn refuses_a_link_in_any_component_naming_the_real_path() {
    let host = Host::new();
    let home = &host.context.home;
    for raw in ["~/Linked", "~/Linked/notes"] {
        let refusal = host.check(raw).unwrap_err();
        let MountRefusal::Symlink { link, real, .. } = &refusal else {
            panic!("{raw}: {refusal:?}");
        };
        assert_eq!(link, &home.join("Linked"));
        assert!(real.as_ref().unwrap().starts_with(home.join("Documents")));
        assert!(
            refusal.to_string().contains("is a symbolic link"),
            "{refusal}"
        );
    }
}

#[test]
fn refuses_missing_paths_sockets_and_paths_outside_the_roots() {
    let host = Host::new();
    let home = &host.context.home;
    assert_eq!(
        host.check("~/nope/deeper"),
        Err(MountRefusal::Missing {
            path: home.join("nope/deeper"),
            missing: home.join("nope"),
        })
    );
    let socket = home.join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    assert_eq!(
        host.check("~/agent.sock"),
        Err(MountRefusal::SpecialFile {
            path: socket,
            kind: "socket",
        })
    );
    let other = host.root.join("other");
    let refusal = host.check(&other.display().to_string()).unwrap_err();
    assert!(
        matches!(&refusal, MountRefusal::OutsideAllowedRoots { path, .. } if *path == other),
        "{refusal:?}"
    );
    assert!(
        refusal
            .to_string()
            .contains("add its directory to `allowedRoots`")
    );
    assert!(matches!(
        host.check("work/x"),
        Err(MountRefusal::NotAbsolute { .. })
    ));
    assert!(matches!(
        host.check("~/Documents/../.ssh"),
        Err(MountRefusal::DotDot { .. })
    ));
}

#[test]
fn a_root_that_is_not_absolute_is_refused() {
    assert!(matches!(
        AllowedRoots::new(&["srv".to_owned()], Path::new("/home/ann")),
        Err(MountRefusal::NotAbsolute { .. })
    ));
}

mod property {
    use super::*;
    use proptest::prelude::*;

    /// Path components to build from: plain names, hidden ones, links into the credentials
    /// and into `/etc`, `.` and `..`.
    const PARTS: &[&str] = &[
        "home",
        "Documents",
        "notes",
        ".ssh",
        "data",
        "allowed",
        "w",
        "to-ssh",
        "to-etc",
        ".",
        "..",
    ];

    /// The places no accepted path may be, lie in or contain, resolved.
    fn sensitive(host: &Host) -> Vec<PathBuf> {
        let mut paths = vec![
            host.context.home.join(".ssh"),
            host.context.data_dir.clone(),
            host.root.join("config.json5"),
            PathBuf::from("/etc"),
            PathBuf::from("/proc"),
        ];
        for path in ["/run", "/var/run/docker.sock"] {
            paths.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.into()));
        }
        paths
    }

    /// Whatever is accepted is its own real path (no link was followed on the way) and meets
    /// no sensitive place, checked against the file system's own resolution.
    #[test]
    fn an_accepted_source_is_real_and_meets_nothing_sensitive() {
        let host = Host::new();
        let home = &host.context.home;
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("to-ssh")).unwrap();
        std::os::unix::fs::symlink("/etc", home.join("to-etc")).unwrap();
        std::os::unix::fs::symlink("/etc", host.root.join("allowed/to-etc")).unwrap();
        let deny = DenyList::new(&host.context);
        let places = sensitive(&host);
        let roots = ["", "/etc", "/run", "/var/run", "/usr", "/"];
        let strategy = (
            prop::sample::select(roots.to_vec()),
            prop::collection::vec(prop::sample::select(PARTS.to_vec()), 0..5),
        );
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(2048));
        let outcome = runner.run(&strategy, |(absolute, parts)| {
            let base = match absolute {
                "" => host.root.clone(),
                absolute => PathBuf::from(absolute),
            };
            let raw = parts.iter().fold(base, |path, part| path.join(part));
            if let Ok(path) = check_source(&raw.display().to_string(), home, &deny, None) {
                prop_assert_eq!(std::fs::canonicalize(&path).ok(), Some(path.clone()));
                for place in &places {
                    prop_assert!(
                        !path.starts_with(place) && !place.starts_with(&path),
                        "{} meets {}",
                        path.display(),
                        place.display()
                    );
                }
            }
            Ok(())
        });
        if let Err(failure) = outcome {
            panic!("{failure}");
        }
    }
}
