package session

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/profile"
)

// ProfileChoice is the harness profile the user chose (package profile):
// the profile: section of the user's configuration file, its name
// replaced by --profile. The zero value is the model's built-in profile.
type ProfileChoice struct {
	// Name is the built-in profile to start from; "" for the model's.
	Name string `yaml:"name"`
	// Prompt replaces the profile's prompt section ("" removes it).
	Prompt *string `yaml:"prompt"`
	// ToolDescriptions replace the descriptions of the tools they name,
	// over the profile's own.
	ToolDescriptions map[string]string `yaml:"tool_descriptions"`
	// Cache changes how requests are marked for the prompt cache.
	Cache *CacheChoice `yaml:"cache"`
}

// CacheChoice changes what it sets of the profile's profile.Cache.
type CacheChoice struct {
	Breakpoints *bool   `yaml:"breakpoints"`
	TTL         *string `yaml:"ttl"`
	Key         *bool   `yaml:"key"`
}

// check reports a name that is no built-in profile, and a cache
// lifetime no provider takes (which would fail every request).
func (c ProfileChoice) check() error {
	if c.Name != "" {
		if _, ok := profile.Builtin(c.Name); !ok {
			return fmt.Errorf("unknown profile %q: the profiles are %s", c.Name, strings.Join(profile.Names(), ", "))
		}
	}
	if c.Cache != nil && c.Cache.TTL != nil {
		// Whether the profile's marks take it is known once the model is.
		if err := (profile.Cache{TTL: *c.Cache.TTL}).Check(); err != nil {
			return fmt.Errorf("cache.ttl %w", err)
		}
	}
	return nil
}

// recordedProfile is a model that plays a recording, which holds the
// profile it was recorded with (replay.Model).
type recordedProfile interface{ Profile() json.RawMessage }

// For returns the profile for a model: the built-in the choice names, else
// the one a recording was made with, else the model's; with the choice's
// changes.
func (c ProfileChoice) For(m llm.Model) profile.Profile {
	p, ok := profile.Builtin(c.Name)
	if !ok {
		p = profile.For(llm.Describe(m))
		if r, isReplay := m.(recordedProfile); isReplay && c.Name == "" {
			var rec profile.Profile
			if raw := r.Profile(); len(raw) > 0 && json.Unmarshal(raw, &rec) == nil {
				p = rec
			}
		}
	}
	if c.Prompt != nil {
		p.Prompt = *c.Prompt
	}
	for tool, d := range c.ToolDescriptions {
		if p.ToolDescriptions == nil {
			p.ToolDescriptions = map[string]string{}
		}
		p.ToolDescriptions[tool] = d
	}
	if cc := c.Cache; cc != nil {
		if cc.Breakpoints != nil {
			p.Cache.Breakpoints = *cc.Breakpoints
		}
		if cc.TTL != nil {
			p.Cache.TTL = *cc.TTL
		}
		if cc.Key != nil {
			p.Cache.Key = *cc.Key
		}
	}
	return p
}
