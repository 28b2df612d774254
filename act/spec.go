package act

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// CampaignSpec is a campaign built in Go rather than read from a file:
// the fields of a campaign file, zero values taking the same defaults.
// NewCampaign validates it exactly as ParseCampaign validates a file.
type CampaignSpec struct {
	CCAI       []string               `yaml:"ccai"`
	Topology   string                 `yaml:"topology,omitempty"`
	Profile    string                 `yaml:"profile,omitempty"`
	Bytes      uint64                 `yaml:"bytes,omitempty"`
	NoSACK     bool                   `yaml:"-"`
	Handshake  bool                   `yaml:"handshake,omitempty"`
	Params     map[string]Range       `yaml:"params,omitempty"`
	Conditions []corpus.ConditionSpec `yaml:"conditions,omitempty"`
	Kappa      int                    `yaml:"kappa,omitempty"`
	Delta      float64                `yaml:"delta,omitempty"`
	Window     int                    `yaml:"window,omitempty"`
	Budget     int                    `yaml:"budget,omitempty"`
	Seed       uint64                 `yaml:"seed,omitempty"`
	Memory     string                 `yaml:"memory,omitempty"`
}

// NewCampaign builds a campaign from spec; name stands for the file in
// errors and in Campaign.Path. Its Source is the equivalent campaign file,
// so it checkpoints and resumes like one.
func NewCampaign(name string, spec CampaignSpec) (*Campaign, error) {
	return NewCampaignFor(name, spec, netenv.NativeCapabilities())
}

// NewCampaignFor is NewCampaign for a subject with capabilities caps
// (ParseCampaignFor).
func NewCampaignFor(name string, spec CampaignSpec, caps netenv.Capabilities) (*Campaign, error) {
	type file struct {
		CampaignSpec `yaml:",inline"`
		SACK         *bool `yaml:"sack,omitempty"`
	}
	f := file{CampaignSpec: spec}
	if spec.NoSACK {
		no := false
		f.SACK = &no
	}
	src, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ParseCampaignFor(name, src, caps)
}
