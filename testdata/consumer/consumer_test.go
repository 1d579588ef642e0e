package consumer_test

import (
	"testing"

	"example.com/consumer"

	"github.com/ds4context/adapterkit/spec"
)

func TestConformance(t *testing.T) { spec.Run(t, consumer.Factory()) }
