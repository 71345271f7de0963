// Written for evalrun's compat corpus: a provider class in TypeScript that calls an OpenAI-compatible chat API
// (OPENROUTER_API_BASE_URL) with the review schema as a json_schema response_format.
import { reviewJsonSchema } from "./src/criteria.ts";

interface ProviderConfig {
  model: string;
  temperature?: number;
  maxTokens?: number;
  structuredOutput?: boolean;
}

interface ChatMessage {
  role: string;
  content: string;
}

/** Prompt functions that return messages arrive JSON-encoded; graders send plain text. */
function toMessages(prompt: string): ChatMessage[] {
  try {
    const parsed: unknown = JSON.parse(prompt);
    if (Array.isArray(parsed)) return parsed as ChatMessage[];
  } catch {
    // plain text: one user turn
  }
  return [{ role: "user", content: prompt }];
}

const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

function unwrapFence(text: string): string {
  const match = FENCED.exec(text.trim());
  return match?.[1] ?? text;
}

export default class OpenRouterCostProvider {
  private readonly config: ProviderConfig;

  constructor(options: { config?: ProviderConfig } = {}) {
    if (!options.config?.model) throw new Error("openrouter-provider requires `config.model`");
    this.config = options.config;
  }

  id(): string {
    return `openrouter:${this.config.model}`;
  }

  async callApi(prompt: string) {
    const apiKey = process.env.OPENROUTER_API_KEY;
    if (!apiKey) return { error: "OPENROUTER_API_KEY is not set" };
    const base = process.env.OPENROUTER_API_BASE_URL ?? "https://openrouter.ai/api/v1";
    const response = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        model: this.config.model,
        messages: toMessages(prompt),
        temperature: this.config.temperature ?? 0.2,
        max_tokens: this.config.maxTokens ?? 4096,
        ...(this.config.structuredOutput === true
          ? { response_format: { type: "json_schema", json_schema: { name: "response", strict: true, schema: reviewJsonSchema() } } }
          : {}),
      }),
    });
    if (!response.ok) return { error: `OpenRouter ${String(response.status)}: ${await response.text()}` };
    const data = (await response.json()) as {
      choices?: { message?: { content?: string } }[];
      usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
    };
    const usage = data.usage ?? {};
    return {
      output: unwrapFence(data.choices?.[0]?.message?.content ?? ""),
      tokenUsage: { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens },
    };
  }
}
