package sandbox

// The sandbox reads and writes Adyen's shapes with types of its own, not the adapter's: it is
// the other side of the wire, so a field the adapter names wrongly fails its tests.

// Result codes and refusal reason codes of Adyen's that the sandbox answers with.
const (
	resultAuthorised       = "Authorised"
	resultRefused          = "Refused"
	resultError            = "Error"
	resultRedirectShopper  = "RedirectShopper"
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
	Amount             amount             `json:"amount"`
	Reference          string             `json:"reference"`
	MerchantAccount    string             `json:"merchantAccount"`
	PaymentMethod      paymentMethod      `json:"paymentMethod"`
	AdditionalData     map[string]string  `json:"additionalData"`
	ReturnURL          string             `json:"returnUrl"`
	Channel            string             `json:"channel"`
	BrowserInfo        *browserInfo       `json:"browserInfo"`
	AuthenticationData authenticationData `json:"authenticationData"`
}

// browserInfo is what the sandbox reads of the shopper's browser: the two fields every browser
// sends, by which it tells one was described.
type browserInfo struct {
	AcceptHeader string `json:"acceptHeader"`
	UserAgent    string `json:"userAgent"`
}

type authenticationData struct {
	ThreeDSRequestData struct {
		NativeThreeDS string `json:"nativeThreeDS"`
	} `json:"threeDSRequestData"`
}

// paymentAnswer is the answer of /payments and of /payments/details. One that redirects the
// shopper has only its resultCode and action.
type paymentAnswer struct {
	PSPReference      string          `json:"pspReference,omitempty"`
	ResultCode        string          `json:"resultCode"`
	RefusalReason     string          `json:"refusalReason,omitempty"`
	RefusalReasonCode string          `json:"refusalReasonCode,omitempty"`
	MerchantReference string          `json:"merchantReference,omitempty"`
	Amount            amount          `json:"amount,omitzero"`
	Action            *redirectAction `json:"action,omitempty"`
}

type redirectAction struct {
	Type              string `json:"type"`
	PaymentMethodType string `json:"paymentMethodType"`
	URL               string `json:"url"`
	Method            string `json:"method"`
}

type detailsRequest struct {
	Details struct {
		RedirectResult string `json:"redirectResult"`
	} `json:"details"`
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
