package configs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClearSecrets(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []ClearSecret
	}{
		{"from the environment", "providers:\n  openai:\n    apiKey: ${OPENAI_API_KEY}\n", nil},
		{"empty default", "providers:\n  openai:\n    apiKey: ${OPENAI_API_KEY:-}\n", nil},
		{"two references", "providers:\n  openai:\n    apiKey: ${A}${B:-${C}}\n", nil},
		{"empty and null", "providers:\n  openai:\n    apiKey: \"\"\n  gemini:\n    apiKey:\n", nil},
		{"literal", "providers:\n  openai:\n    apiKey: sk-live-1234\n",
			[]ClearSecret{{Path: "providers.openai.apiKey", Line: 3}}},
		{"literal default", "providers:\n  openai:\n    apiKey: ${OPENAI_API_KEY:-sk-live-1234}\n",
			[]ClearSecret{{Path: "providers.openai.apiKey", Line: 3}}},
		{"literal around a reference", "providers:\n  openai:\n    apiKey: sk-${REST}\n",
			[]ClearSecret{{Path: "providers.openai.apiKey", Line: 3}}},
		{"channel tokens", "channels:\n  telegram:\n    botToken: \"123:abc\"\n    webhookSecret: s3cret\n  feishu:\n    appId: cli_1\n    appSecret: ${FEISHU_APP_SECRET}\n    encryptKey: k\n",
			[]ClearSecret{{Path: "channels.telegram.botToken", Line: 3}, {Path: "channels.telegram.webhookSecret", Line: 4}, {Path: "channels.feishu.encryptKey", Line: 8}}},
		{"numbers named token are no secret", "models:\n  openai/x:\n    maxTokens: 100\nsession:\n  dailyTokenBudget: 5\n", nil},
		{"not YAML", "providers: [\n", nil},
		{"the example", string(Example), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ClearSecrets([]byte(tt.yaml))); diff != "" {
				t.Errorf("ClearSecrets (-want +got):\n%s", diff)
			}
		})
	}
}
