// The error body of S3 and other AWS XML APIs, for http::SendWithRetry's parse_error hook:
//   S3:   <Error><Code>SlowDown</Code><Message>...</Message><RequestId>...</RequestId></Error>
//   STS:  <ErrorResponse><Error><Type>Sender</Type><Code>...</Code><Message>...</Message>
//         </Error><RequestId>...</RequestId></ErrorResponse>
// The message carries the request id when there is one (what AWS support asks for). A body that
// is empty (HEAD) or not such XML gives an empty ServiceError: the HTTP status alone classifies.
//
// Thread-safety: a pure function.
#pragma once

#include "ferry/http/message.h"
#include "ferry/http/outcome.h"

namespace ferry::storage::s3 {

http::ServiceError ParseAwsError(const http::HttpResponse& response);

}  // namespace ferry::storage::s3
