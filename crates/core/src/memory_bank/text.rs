//! Text shipped with the plugin: the rules (how an agent reads and keeps the memory bank) and the
//! templates new core files are seeded from, in English, Japanese and Chinese.

use super::Language;

/// The built-in rules for `lang` (a project overrides them with `<root>/rules-<lang>.md`).
pub fn rules(lang: Language) -> &'static str {
    match lang {
        Language::En => include_str!("rules/en.md"),
        Language::Ja => include_str!("rules/ja.md"),
        Language::Zh => include_str!("rules/zh.md"),
    }
}

macro_rules! templates {
    ($lang:literal; $($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("templates/", $lang, "/", $name)))),*]
    };
}

const EN: &[(&str, &str)] = templates!("en";
    "branchContext.md", "activeContext.md", "systemPatterns.md", "progress.md",
    "architecture.md", "coding-standards.md", "domain-models.md", "glossary.md",
    "tech-stack.md", "user-guide.md");

const JA: &[(&str, &str)] = templates!("ja";
    "branchContext.md", "activeContext.md", "systemPatterns.md", "progress.md",
    "architecture.md", "coding-standards.md", "domain-models.md", "glossary.md",
    "tech-stack.md", "user-guide.md");

const ZH: &[(&str, &str)] = templates!("zh";
    "branchContext.md", "activeContext.md", "systemPatterns.md", "progress.md",
    "architecture.md", "coding-standards.md", "domain-models.md", "glossary.md",
    "tech-stack.md", "user-guide.md");

/// The template of the core file `name` in `lang`, if `name` is a core file.
pub fn template(lang: Language, name: &str) -> Option<&'static str> {
    let table = match lang {
        Language::En => EN,
        Language::Ja => JA,
        Language::Zh => ZH,
    };
    table.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_bank::{document::markdown_tags, BRANCH_CORE_FILES, GLOBAL_CORE_FILES};

    #[test]
    fn every_core_file_has_a_template_in_both_languages_with_the_spec_tags() {
        for lang in [Language::En, Language::Ja, Language::Zh] {
            for name in BRANCH_CORE_FILES.iter().chain(GLOBAL_CORE_FILES.iter()) {
                let t = template(lang, name).unwrap_or_else(|| panic!("{lang:?} {name}"));
                let tags = markdown_tags(t);
                // "branchContext.md" -> "branch-context" (doc/protocol.md, read_context).
                let stem = name.trim_end_matches(".md");
                let mut kebab = String::new();
                for c in stem.chars() {
                    if c.is_ascii_uppercase() {
                        kebab.push('-');
                        kebab.push(c.to_ascii_lowercase());
                    } else {
                        kebab.push(c);
                    }
                }
                assert_eq!(tags, vec!["core".to_string(), kebab], "{lang:?} {name}");
            }
        }
        assert!(template(Language::En, "notes.md").is_none());
    }

    #[test]
    fn rules_differ_by_language() {
        assert!(rules(Language::En).contains("read_context"));
        assert!(rules(Language::Ja).contains("メモリバンク"));
        assert!(
            rules(Language::Zh).contains("记忆库") && rules(Language::Zh).contains("read_context")
        );
        assert_eq!(
            markdown_tags(rules(Language::Zh)),
            vec!["rules", "memory-bank"]
        );
        assert_eq!(
            markdown_tags(rules(Language::Ja)),
            vec!["rules", "memory-bank"]
        );
    }
}
