//! The table of token shapes (rule 6): a fixed prefix, then a body of one character class
//! with a minimum length. The table is the one place a token format is described; the
//! trigger pass ([`super::scan`]), the live edge and the skill validator's messages all read it.
//!
//! Where the shapes come from: hal0's own key formats (`src/auth`, `src/auth/consumers.rs`),
//! the rule set of gitleaks (`config/gitleaks.toml`, read for the prefixes and alphabets of
//! each vendor's format; no code taken), and vendors' published formats where gitleaks has
//! none. Minimums are below the real lengths so a token cut short still counts, and there is
//! no maximum: the whole run of body characters is masked.

/// Characters a token body may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// `[A-Za-z0-9_-]`.
    Word,
    /// `[A-Za-z0-9]`.
    Alnum,
    /// `[A-Z0-9]`.
    Upper,
    /// `[0-9a-fA-F]`.
    Hex,
    /// `[A-Za-z0-9_-]`, and `.` between two of them (a sentence's final `.` is not taken).
    Dotted,
    /// Base64 in either alphabet with padding: `[A-Za-z0-9_+/=-]`.
    Base64,
    /// A URL path: `[A-Za-z0-9_+/%=@-]`, and `.` between two of them.
    Path,
}

impl Body {
    /// May `c` be part of the body (`.` aside, see [`Body::run_end`])?
    fn has(self, c: u8) -> bool {
        match self {
            Body::Word | Body::Dotted => c.is_ascii_alphanumeric() || c == b'_' || c == b'-',
            Body::Alnum => c.is_ascii_alphanumeric(),
            Body::Upper => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Body::Hex => c.is_ascii_hexdigit(),
            Body::Base64 => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'/' | b'=' | b'-'),
            Body::Path => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'/' | b'%' | b'=' | b'@' | b'-'),
        }
    }

    /// End of the body that starts at `from`.
    pub(crate) fn run_end(self, b: &[u8], from: usize) -> usize {
        let dots = matches!(self, Body::Dotted | Body::Path);
        let mut i = from;
        while i < b.len() {
            if self.has(b[i]) || (dots && b[i] == b'.' && i > from && b.get(i + 1).is_some_and(|&c| self.has(c))) {
                i += 1;
            } else {
                break;
            }
        }
        i
    }
}

/// One token shape.
#[derive(Debug, Clone, Copy)]
pub struct Token {
    /// A short stable name (gitleaks' rule id where there is one).
    pub id: &'static str,
    /// The literal the token starts with (case-sensitive).
    pub prefix: &'static str,
    /// What may follow the prefix.
    pub body: Body,
    /// Body characters needed for a match (the live edge needs none).
    pub min: usize,
    /// What the token is, for people.
    pub what: &'static str,
    /// Where the shape is documented.
    pub source: &'static str,
}

impl Token {
    /// How a finding of this shape is named in messages, without its value.
    pub fn noun(&self) -> String {
        match self.body {
            Body::Path => format!("a `{}…` webhook URL", self.prefix),
            _ if self.id.starts_with("aws") => format!("an `{}…` access key", self.prefix),
            _ => format!("a `{}…` token", self.prefix),
        }
    }

    /// May the prefix alone, at the live edge, be masked? Only when it cannot be the start of
    /// an ordinary word: it holds a character other than a letter or digit.
    pub(crate) fn bare_prefix_is_secret(&self) -> bool {
        self.prefix.bytes().any(|c| !c.is_ascii_alphanumeric())
    }
}

const fn t(id: &'static str, prefix: &'static str, body: Body, min: usize, what: &'static str) -> Token {
    Token { id, prefix, body, min, what, source: "gitleaks" }
}

const fn own(id: &'static str, prefix: &'static str, what: &'static str, source: &'static str) -> Token {
    Token { id, prefix, body: Body::Word, min: 20, what, source }
}

const fn vendor(id: &'static str, prefix: &'static str, body: Body, min: usize, what: &'static str) -> Token {
    Token { id, prefix, body, min, what, source: "vendor documentation" }
}

use Body::{Alnum, Base64, Dotted, Hex, Path, Upper, Word};

/// Every token shape the redactor masks whole.
pub const TOKENS: &[Token] = &[
    // hal0's own keys: every `KEY_PREFIX` hal0 mints (a test checks the constants).
    own("hal0-bridge-key", "hal0bk_", "hal0 bridge client key", "src/auth/bridge.rs"),
    own("hal0-consumer-key", "hal0pk_", "hal0 proxy consumer key", "src/auth/consumers.rs"),
    own("hal0-admin-key", "hal0ak_", "hal0 admin box key", "src/auth/boxkeys.rs"),
    own("hal0-client-key", "hal0ck_", "hal0 client box key", "src/auth/boxkeys.rs"),
    own("hal0-oauth-access-token", "hal0at_", "hal0 OAuth access token", "src/auth/oauth/mod.rs"),
    own("hal0-oauth-refresh-token", "hal0rt_", "hal0 OAuth refresh token", "src/auth/oauth/mod.rs"),
    own("hal0-oauth-code", "hal0ac_", "hal0 OAuth authorization code", "src/auth/oauth/mod.rs"),
    own(
        "hal0-oauth-client-secret",
        "hal0cs_",
        "hal0 OAuth client secret or registration token",
        "src/auth/oauth/mod.rs",
    ),
    // Model providers.
    t("huggingface-access-token", "hf_", Word, 20, "Hugging Face access token"),
    t("huggingface-organization-api-token", "api_org_", Word, 20, "Hugging Face organization token"),
    t("openai-api-key", "sk-", Word, 20, "OpenAI / Anthropic / OpenRouter style secret key (`sk-proj-`, `sk-ant-`, …)"),
    vendor("groq-api-key", "gsk_", Word, 20, "Groq API key"),
    t("perplexity-api-key", "pplx-", Word, 20, "Perplexity API key"),
    vendor("xai-api-key", "xai-", Word, 40, "xAI API key"),
    vendor("replicate-api-token", "r8_", Word, 20, "Replicate API token"),
    t("langsmith-api-key", "lsv2_", Word, 20, "LangSmith API key"),
    t("gcp-api-key", "AIza", Word, 30, "Google API key"),
    vendor("google-oauth-client-secret", "GOCSPX-", Word, 20, "Google OAuth client secret"),
    vendor("google-oauth-access-token", "ya29.", Dotted, 30, "Google OAuth access token"),
    // Code hosting and package registries.
    t("github-pat", "ghp_", Word, 20, "GitHub personal access token"),
    t("github-oauth", "gho_", Word, 20, "GitHub OAuth token"),
    t("github-app-token", "ghu_", Word, 20, "GitHub user-to-server token"),
    t("github-app-token-server", "ghs_", Word, 20, "GitHub server-to-server token"),
    t("github-refresh-token", "ghr_", Word, 20, "GitHub refresh token"),
    t("github-fine-grained-pat", "github_pat_", Word, 20, "GitHub fine-grained token"),
    t("gitlab-pat", "glpat-", Dotted, 20, "GitLab personal access token"),
    t("gitlab-deploy-token", "gldt-", Word, 20, "GitLab deploy token"),
    t("gitlab-runner-authentication-token", "glrt-", Dotted, 20, "GitLab runner token"),
    t("gitlab-ptt", "glptt-", Word, 20, "GitLab pipeline trigger token"),
    t("gitlab-feed-token", "glft-", Word, 20, "GitLab feed token"),
    t("gitlab-incoming-mail-token", "glimt-", Word, 20, "GitLab incoming mail token"),
    t("gitlab-kubernetes-agent-token", "glagent-", Word, 20, "GitLab agent token"),
    t("gitlab-oauth-app-secret", "gloas-", Word, 20, "GitLab OAuth application secret"),
    t("gitlab-scim-token", "glsoat-", Word, 20, "GitLab SCIM token"),
    t("gitlab-feature-flag-client-token", "glffct-", Word, 20, "GitLab feature flag token"),
    t("gitlab-cicd-job-token", "glcbt-", Word, 20, "GitLab CI/CD job token"),
    t("gitlab-rrt", "GR1348941", Word, 20, "GitLab runner registration token"),
    t("bitbucket-api-token", "ATBB", Alnum, 24, "Bitbucket app password"),
    t("atlassian-api-token", "ATATT3", Base64, 40, "Atlassian API token"),
    t("npm-access-token", "npm_", Alnum, 30, "npm access token"),
    t("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc", Word, 20, "PyPI upload token"),
    t("rubygems-api-token", "rubygems_", Hex, 40, "RubyGems API key"),
    vendor("docker-hub-pat", "dckr_pat_", Word, 20, "Docker Hub access token"),
    t("sourcegraph-access-token", "sgp_", Word, 20, "Sourcegraph access token"),
    t("clojars-api-token", "CLOJARS_", Alnum, 40, "Clojars deploy token"),
    t("shopify-access-token", "shpat_", Hex, 32, "Shopify access token"),
    t("shopify-custom-access-token", "shpca_", Hex, 32, "Shopify custom app token"),
    t("shopify-private-app-access-token", "shppa_", Hex, 32, "Shopify private app token"),
    t("shopify-shared-secret", "shpss_", Hex, 32, "Shopify shared secret"),
    // Chat and webhooks.
    t("slack-bot-token", "xoxb-", Word, 20, "Slack bot token"),
    t("slack-legacy-workspace-token", "xoxa-", Word, 20, "Slack workspace token"),
    t("slack-user-token", "xoxp-", Word, 20, "Slack user token"),
    t("slack-legacy-workspace-token-r", "xoxr-", Word, 20, "Slack refresh token"),
    t("slack-legacy-token", "xoxs-", Word, 20, "Slack legacy token"),
    t("slack-legacy-token-o", "xoxo-", Word, 20, "Slack legacy token"),
    t("slack-config-refresh-token", "xoxe-", Word, 20, "Slack configuration refresh token"),
    t("slack-config-access-token", "xoxe.", Dotted, 20, "Slack configuration access token"),
    t("slack-app-token", "xapp-", Word, 20, "Slack app-level token"),
    t("slack-webhook-url", "hooks.slack.com", Path, 30, "Slack incoming webhook URL"),
    vendor("discord-webhook-url", "discord.com/api/webhooks/", Path, 30, "Discord webhook URL"),
    vendor("discordapp-webhook-url", "discordapp.com/api/webhooks/", Path, 30, "Discord webhook URL"),
    t("microsoft-teams-webhook", "webhook.office.com/webhookb2/", Path, 40, "Microsoft Teams webhook URL"),
    t("twilio-api-key", "SK", Hex, 32, "Twilio API key SID's secret pair (`SK` and 32 hex)"),
    t("mailgun-private-api-token", "key-", Hex, 32, "Mailgun private API key"),
    t("facebook-access-token", "EAACEdEose0cBA", Alnum, 20, "Facebook / Meta access token"),
    vendor("meta-system-user-token", "EAAG", Alnum, 100, "Meta (WhatsApp Business) access token"),
    t("sendgrid-api-token", "SG.", Dotted, 40, "SendGrid API key"),
    t("sendinblue-api-token", "xkeysib-", Word, 40, "Brevo (Sendinblue) API key"),
    vendor("sendinblue-smtp-key", "xsmtpsib-", Word, 40, "Brevo (Sendinblue) SMTP key"),
    // Cloud.
    t("aws-access-token", "AKIA", Upper, 16, "AWS access key ID"),
    t("aws-access-token-temporary", "ASIA", Upper, 16, "AWS temporary (STS) access key ID"),
    t("aws-access-token-abia", "ABIA", Upper, 16, "AWS access key ID (STS service bearer)"),
    t("aws-access-token-acca", "ACCA", Upper, 16, "AWS access key ID (context-specific)"),
    t("aws-access-token-a3t", "A3T", Upper, 17, "AWS access key ID (legacy)"),
    t("aws-amazon-bedrock-api-key-long-lived", "ABSK", Base64, 60, "Amazon Bedrock API key"),
    t("alibaba-access-key-id", "LTAI", Alnum, 20, "Alibaba Cloud access key ID"),
    t("digitalocean-pat", "dop_v1_", Hex, 40, "DigitalOcean personal access token"),
    t("digitalocean-access-token", "doo_v1_", Hex, 40, "DigitalOcean OAuth token"),
    t("digitalocean-refresh-token", "dor_v1_", Hex, 40, "DigitalOcean refresh token"),
    t("heroku-api-key-v2", "HRKU-", Word, 40, "Heroku API key"),
    t("flyio-access-token", "fo1_", Word, 40, "Fly.io access token"),
    t("flyio-macaroon", "fm2_", Base64, 60, "Fly.io macaroon token"),
    t("flyio-macaroon-v1a", "fm1a_", Base64, 60, "Fly.io macaroon token"),
    t("flyio-macaroon-v1r", "fm1r_", Base64, 60, "Fly.io macaroon token"),
    vendor("netlify-pat", "nfp_", Word, 30, "Netlify personal access token"),
    vendor("supabase-pat", "sbp_", Hex, 40, "Supabase access token"),
    vendor("supabase-secret-key", "sb_secret_", Word, 20, "Supabase secret key"),
    t("planetscale-api-token", "pscale_tkn_", Dotted, 32, "PlanetScale API token"),
    t("planetscale-password", "pscale_pw_", Dotted, 32, "PlanetScale password"),
    t("planetscale-oauth-token", "pscale_oauth_", Dotted, 32, "PlanetScale OAuth token"),
    vendor("tailscale-key", "tskey-", Word, 20, "Tailscale auth or API key"),
    t("doppler-api-token", "dp.pt.", Alnum, 40, "Doppler personal token"),
    vendor("doppler-service-token", "dp.st.", Dotted, 40, "Doppler service token"),
    vendor("doppler-service-account-token", "dp.sa.", Alnum, 40, "Doppler service account token"),
    vendor("doppler-cli-token", "dp.ct.", Alnum, 40, "Doppler CLI token"),
    t("vault-service-token", "hvs.", Word, 24, "HashiCorp Vault service token"),
    t("vault-batch-token", "hvb.", Word, 24, "HashiCorp Vault batch token"),
    vendor("vault-recovery-token", "hvr.", Word, 24, "HashiCorp Vault recovery token"),
    t("pulumi-api-token", "pul-", Hex, 40, "Pulumi access token"),
    t("databricks-api-token", "dapi", Hex, 32, "Databricks token"),
    t("dynatrace-api-token", "dt0c01.", Dotted, 40, "Dynatrace API token"),
    t("grafana-cloud-api-token", "glc_", Base64, 32, "Grafana Cloud token"),
    t("grafana-service-account-token", "glsa_", Word, 32, "Grafana service account token"),
    t("new-relic-user-api-key", "NRAK-", Alnum, 27, "New Relic user API key"),
    t("new-relic-insert-key", "NRII-", Word, 32, "New Relic insert key"),
    t("sentry-org-token", "sntrys_", Base64, 40, "Sentry organization token"),
    t("sentry-user-token", "sntryu_", Hex, 40, "Sentry user token"),
    t("linear-api-key", "lin_api_", Alnum, 32, "Linear API key"),
    t("notion-api-token", "ntn_", Alnum, 40, "Notion integration token"),
    vendor("figma-pat", "figd_", Word, 30, "Figma personal access token"),
    t("postman-api-token", "PMAK-", Word, 40, "Postman API key"),
    t("prefect-api-token", "pnu_", Alnum, 30, "Prefect API key"),
    t("readme-api-token", "rdme_", Alnum, 40, "ReadMe API key"),
    vendor("buildkite-token", "bkua_", Alnum, 40, "Buildkite API token"),
    t("age-secret-key", "AGE-SECRET-KEY-1", Upper, 50, "age secret key"),
    t("1password-service-account-token", "ops_eyJ", Base64, 100, "1Password service account token"),
    t("infracost-api-token", "ico-", Alnum, 32, "Infracost API key"),
    t("contentful-pat", "CFPAT-", Word, 40, "Contentful personal access token"),
    t("scalingo-api-token", "tk-us-", Word, 40, "Scalingo API token"),
    t("defined-networking-api-token", "dnkey-", Word, 40, "Defined Networking API token"),
    t("openshift-user-token", "sha256~", Word, 40, "OpenShift user token"),
    t("artifactory-api-key", "AKCp", Alnum, 60, "JFrog Artifactory API key"),
    t("frameio-api-token", "fio-u-", Word, 40, "Frame.io API token"),
    t("typeform-api-token", "tfp_", Dotted, 40, "Typeform token"),
    t("duffel-api-token-live", "duffel_live_", Word, 40, "Duffel live token"),
    t("duffel-api-token-test", "duffel_test_", Word, 40, "Duffel test token"),
    t("easypost-api-token", "EZAK", Alnum, 40, "EasyPost API key"),
    t("easypost-test-api-token", "EZTK", Alnum, 40, "EasyPost test API key"),
    t("shippo-api-token-live", "shippo_live_", Hex, 40, "Shippo live token"),
    t("shippo-api-token-test", "shippo_test_", Hex, 40, "Shippo test token"),
    t("flutterwave-secret-key", "FLWSECK_TEST-", Word, 32, "Flutterwave secret key"),
    vendor("flutterwave-live-secret-key", "FLWSECK-", Word, 32, "Flutterwave secret key"),
    t("square-access-token", "sq0atp-", Word, 22, "Square access token"),
    vendor("square-oauth-secret", "sq0csp-", Word, 22, "Square OAuth secret"),
    t("yandex-api-key", "AQVN", Word, 35, "Yandex Cloud API key"),
    t("mapbox-secret-token", "sk.", Dotted, 60, "Mapbox secret token"),
    t("settlemint-personal-access-token", "sm_pat_", Alnum, 16, "SettleMint access token"),
    t("settlemint-application-access-token", "sm_aat_", Alnum, 16, "SettleMint application token"),
    t("settlemint-service-access-token", "sm_sat_", Alnum, 16, "SettleMint service token"),
    vendor("pinecone-api-key", "pcsk_", Word, 40, "Pinecone API key"),
    t("plaid-api-token-production", "access-production-", Word, 32, "Plaid access token"),
    t("plaid-api-token-development", "access-development-", Word, 32, "Plaid access token"),
    t("plaid-api-token-sandbox", "access-sandbox-", Word, 32, "Plaid access token"),
    // Payments.
    t("stripe-access-token-live", "sk_live_", Alnum, 16, "Stripe live secret key"),
    t("stripe-access-token-test", "sk_test_", Alnum, 16, "Stripe test secret key"),
    t("stripe-access-token-prod", "sk_prod_", Alnum, 16, "Stripe secret key"),
    t("stripe-restricted-key-live", "rk_live_", Alnum, 16, "Stripe live restricted key"),
    t("stripe-restricted-key-test", "rk_test_", Alnum, 16, "Stripe test restricted key"),
    t("stripe-restricted-key-prod", "rk_prod_", Alnum, 16, "Stripe restricted key"),
    vendor("stripe-webhook-secret", "whsec_", Base64, 24, "Stripe webhook signing secret"),
];

/// The token shape `text` starts with, if any (prefix only; the body is not checked).
pub fn token_rule(text: &str) -> Option<&'static Token> {
    TOKENS.iter().filter(|t| text.starts_with(t.prefix)).max_by_key(|t| t.prefix.len())
}
