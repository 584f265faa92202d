// The requests answered without a bearer token (docs/serve.md "Auth"): ARM's cloud metadata
// (az cloud register), the ADFS-style OpenID discovery MSAL reads, and the client-credentials
// token endpoint; and the bearer check every other request passes first.
#pragma once
#include "batchai/serve/server.hpp"
#include "arm/call.hpp"

namespace batchai::serve {

// True when the request was one of these (and has been answered).
bool handle_auth_route(Call& call, const Identity& identity);
// Whether the path is one handle_auth_route serves (answered without a bearer token).
bool is_auth_route(const Call& call);
// True when the request carries a valid, unexpired token; otherwise answers 401 (ARM error).
bool check_bearer(Call& call, const Identity& identity);

}  // namespace batchai::serve
