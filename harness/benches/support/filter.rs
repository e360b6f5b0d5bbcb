//! The filter `cargo bench -- ARGS` gives a bench, read as criterion reads it; shared by
//! the bench targets (`#[path]`-included: a bench target cannot import another's code).

/// The command line's filter: the first free argument (a regex, or an exact id with
/// `--exact`), and whether this is `--list`.
pub struct Filter {
    pub pattern: Option<regex::Regex>,
    pub exact: Option<String>,
    pub list: bool,
}

impl Filter {
    /// Reads the process's arguments. `own` names the bench's own options that take a
    /// value, skipped like criterion's so that their values are not taken for the filter.
    pub fn from_args(own: &[&str]) -> Self {
        // Options of criterion's command line that take a value.
        const WITH_VALUE: &[&str] = &[
            "--color",
            "-c",
            "--save-baseline",
            "-s",
            "--baseline",
            "-b",
            "--baseline-lenient",
            "--load-baseline",
            "--sample-size",
            "--warm-up-time",
            "--measurement-time",
            "--nresamples",
            "--noise-threshold",
            "--confidence-level",
            "--significance-level",
            "--profile-time",
            "--plotting-backend",
            "--output-format",
            "--format",
        ];
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut free = None;
        let mut skip = false;
        for arg in &args {
            if skip {
                skip = false;
            } else if WITH_VALUE.contains(&arg.as_str()) || own.contains(&arg.as_str()) {
                skip = true;
            } else if !arg.starts_with('-') && free.is_none() {
                free = Some(arg.clone());
            }
        }
        let exact = args.iter().any(|a| a == "--exact");
        Filter {
            pattern: free
                .as_deref()
                .filter(|_| !exact)
                .map(|f| regex::Regex::new(f).expect("the filter is a regex")),
            exact: free.filter(|_| exact),
            list: args.iter().any(|a| a == "--list"),
        }
    }

    /// Whether the bench `id` is chosen.
    pub fn matches(&self, id: &str) -> bool {
        match (&self.pattern, &self.exact) {
            (Some(pattern), _) => pattern.is_match(id),
            (None, Some(exact)) => id == exact,
            (None, None) => true,
        }
    }
}
