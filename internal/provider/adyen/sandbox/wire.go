package sandbox

// The sandbox reads and writes Adyen's shapes with types of its own, not the adapter's: it is
// the other side of the wire, so a field the adapter names wrongly fails its tests.

// Result codes and refusal reason codes of Adyen's that the sandbox answers with.
const (
	resultAuthorised       = "Authorised"
	resultRefused          = "Refused"
	resultError            = "Error"
	reasonExpiredCard      = "6"
	reasonNotEnoughBalance = "12"
)

type amount struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}

type paymentMethod struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth string `json:"expiryMonth"`
	ExpiryYear  string `json:"expiryYear"`
	CVC         string `json:"cvc"`
}

type paymentRequest struct {
	Amount          amount            `json:"amount"`
	Reference       string            `json:"reference"`
	MerchantAccount string            `json:"merchantAccount"`
	PaymentMethod   paymentMethod     `json:"paymentMethod"`
	AdditionalData  map[string]string `json:"additionalData"`
}

type paymentAnswer struct {
	PSPReference      string `json:"pspReference"`
	ResultCode        string `json:"resultCode"`
	RefusalReason     string `json:"refusalReason,omitempty"`
	RefusalReasonCode string `json:"refusalReasonCode,omitempty"`
	MerchantReference string `json:"merchantReference"`
	Amount            amount `json:"amount"`
}

type refundRequest struct {
	Amount          amount `json:"amount"`
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

type refundAnswer struct {
	MerchantAccount     string `json:"merchantAccount"`
	PaymentPSPReference string `json:"paymentPspReference"`
	PSPReference        string `json:"pspReference"`
	Reference           string `json:"reference"`
	Status              string `json:"status"`
	Amount              amount `json:"amount"`
}

type captureRequest struct {
	Amount          amount `json:"amount"`
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

type captureAnswer struct {
	Amount              amount `json:"amount"`
	MerchantAccount     string `json:"merchantAccount"`
	PaymentPSPReference string `json:"paymentPspReference"`
	PSPReference        string `json:"pspReference"`
	Reference           string `json:"reference"`
	Status              string `json:"status"`
}

type cancelRequest struct {
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

type cancelAnswer struct {
	MerchantAccount     string `json:"merchantAccount"`
	PaymentPSPReference string `json:"paymentPspReference"`
	PSPReference        string `json:"pspReference"`
	Reference           string `json:"reference"`
	Status              string `json:"status"`
}
