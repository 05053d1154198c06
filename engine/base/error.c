#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-error.h"

G_DEFINE_QUARK (sv-engine-error-quark, sv_engine_error)
