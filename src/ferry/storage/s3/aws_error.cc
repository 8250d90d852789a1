#include "ferry/storage/s3/aws_error.h"

#include "ferry/http/xml.h"

namespace ferry::storage::s3 {

http::ServiceError ParseAwsError(const http::HttpResponse& response) {
  if (response.body.empty()) {
    return {};
  }
  Result<http::XmlElement> root = http::ParseXml(response.body, http::XmlLimits{.max_depth = 8});
  if (!root.ok()) {
    return {};
  }
  const http::XmlElement* error = root->name == "Error" ? &*root : root->Child("Error");
  if (error == nullptr) {
    return {};
  }
  http::ServiceError out{.code = std::string(error->ChildText("Code").value_or("")),
                         .message = std::string(error->ChildText("Message").value_or(""))};
  std::optional<std::string_view> request_id = error->ChildText("RequestId");
  if (!request_id) {
    request_id = root->ChildText("RequestId");
  }
  if (request_id && !request_id->empty()) {
    out.message += out.message.empty() ? "" : " ";
    out.message += "(request id " + std::string(*request_id) + ")";
  }
  return out;
}

}  // namespace ferry::storage::s3
