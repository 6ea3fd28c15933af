package capw

import "capw.dev/sdk/go/internal/host"

// Logger writes structured records into the host's logs, tagged by the host with the
// provider and the call. Cheap: the host drops records below its level and bounds the number
// and size of records per call. Never log secret material (bootstrap data, kubeconfigs,
// secret values).
//
// Fields are key, value pairs: Log.Info("instance created", "cluster", name, "instance", id).
// A key without a value gets an empty one.
type Logger struct{}

// Log is the host's log.
var Log Logger

func (Logger) write(level host.Level, message string, kv []string) {
	fields := make([][2]string, 0, (len(kv)+1)/2)
	for i := 0; i < len(kv); i += 2 {
		value := ""
		if i+1 < len(kv) {
			value = kv[i+1]
		}
		fields = append(fields, [2]string{kv[i], value})
	}
	host.Current.Log(level, message, fields)
}

// Trace writes a record at level trace.
func (l Logger) Trace(message string, kv ...string) { l.write(host.Trace, message, kv) }

// Debug writes a record at level debug.
func (l Logger) Debug(message string, kv ...string) { l.write(host.Debug, message, kv) }

// Info writes a record at level info.
func (l Logger) Info(message string, kv ...string) { l.write(host.Info, message, kv) }

// Warn writes a record at level warn.
func (l Logger) Warn(message string, kv ...string) { l.write(host.Warn, message, kv) }

// Error writes a record at level error.
func (l Logger) Error(message string, kv ...string) { l.write(host.Error, message, kv) }
